"""A guard against silent training failure. A run is flagged (not stopped: it is data) when its
mean validation accuracy, averaged over its last evaluations, sits at chance, or when its mean validation
loss rose at each of its last evaluations by a clear margin in all; the flags go into
``summary.json`` (``training_flags``) and the ``run``, ``compare`` and ``reproduce`` tables.

Evaluations of the set-up round (round 0: the initial model, at chance by construction) do not
count. Regression scenarios have no chance level, so only the loss rule applies there.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

CHANCE_EVALUATIONS = 3  # the last evaluations whose mean accuracy is averaged
CHANCE_FACTOR = 1.2  # "at chance": that average at most 1.2 / classes (0.12 on 10 classes, 0.3 on 4)
LOSS_RISES = 3  # the mean validation loss rose at each of the last 3 evaluations...
LOSS_RISE_FRACTION = 0.05  # ...and ended at least 5% above where the rises began
THRESHOLDS = {"chance_evaluations": CHANCE_EVALUATIONS, "chance_factor": CHANCE_FACTOR,
              "loss_rises": LOSS_RISES, "loss_rise_fraction": LOSS_RISE_FRACTION}


def training_flags(rounds: Sequence[int], mean_accuracy: Sequence[float], mean_loss: Sequence[float],
                   num_classes: int | None) -> list[str]:
    """One line per failure sign over the evaluations (``rounds`` with their mean validation
    accuracy and loss, oldest first); empty when the run trained. ``num_classes`` None (or 1, a
    regression): no chance level."""
    keep = [i for i, r in enumerate(rounds) if r > 0]
    rounds = [int(rounds[i]) for i in keep]
    accuracy = np.array([mean_accuracy[i] for i in keep], dtype=float)
    loss = np.array([mean_loss[i] for i in keep], dtype=float)
    flags = []
    if num_classes is not None and num_classes > 1 and accuracy.size >= CHANCE_EVALUATIONS:
        chance = 1.0 / num_classes
        last = accuracy[-CHANCE_EVALUATIONS:]
        if last.mean() <= CHANCE_FACTOR * chance:
            flags.append(f"at chance: mean accuracy {', '.join(f'{a:.3f}' for a in last)} at rounds "
                         f"{', '.join(map(str, rounds[-CHANCE_EVALUATIONS:]))} (chance {chance:.3f})")
    if loss.size > LOSS_RISES and np.all(np.isfinite(loss[-LOSS_RISES - 1:])):
        tail = loss[-LOSS_RISES - 1:]
        if np.all(np.diff(tail) > 0) and tail[-1] >= (1 + LOSS_RISE_FRACTION) * tail[0]:
            flags.append(f"loss rising: mean validation loss {tail[0]:.4f} at round {rounds[-LOSS_RISES - 1]} to "
                         f"{tail[-1]:.4f} at round {rounds[-1]}, up at each of the last {LOSS_RISES} evaluations")
    return flags


def flag_note(flags: Sequence[str]) -> str:
    """The short table cell: which signs, or empty."""
    return "; ".join(f.split(":", 1)[0] for f in flags)
