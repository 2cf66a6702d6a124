"""A guard against silent training failure. A run is flagged (not stopped: it is data) when, over
its last 3 evaluations, its mean validation accuracy sits at chance or its mean validation loss
stays above the untrained model's (the set-up round's), or when its final accuracy has collapsed
far below its own best; a run the runner stopped on non-finite numbers is flagged as diverged.
Runs with fewer than 3 evaluations after the set-up round are judged only on divergence. The flags go into
``summary.json`` (``training_flags``) and the ``run``, ``compare`` and ``reproduce`` tables.

Overfitting (the validation loss rising at each of the last evaluations while the accuracy
holds) is not a failure: it is noted apart (``training_notes``), never flagged.

Evaluations of the set-up round (round 0: the initial model, at chance by construction) count
only as the untrained model's loss. Regression scenarios have no chance level, so only the loss
rules apply there. docs/faithfulness.md gives the runs that set the thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

JUDGED_EVALUATIONS = 3  # a run is judged from its 3rd evaluation after set-up, on its last 3
CHANCE_FACTOR = 1.2  # "at chance": that average at most 1.2 / classes (0.12 on 10 classes, 0.3 on 4)
COLLAPSE_FRACTION = 0.5  # "collapsed": the final accuracy kept less than half its best gain over chance
LOSS_RISES = 3  # overfitting note: the mean validation loss rose at each of the last 3 evaluations...
LOSS_RISE_FRACTION = 0.05  # ...and ended at least 5% above where the rises began


@dataclass(frozen=True)
class Health:
    """``flags``: one line per failure sign (empty when the run trained); ``notes``: signs that
    are not failures (overfitting)."""

    flags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def training_health(rounds: Sequence[int], mean_accuracy: Sequence[float], mean_loss: Sequence[float],
                    num_classes: int | None, diverged: str | None = None) -> Health:
    """The run's failure signs and notes over its evaluations (``rounds`` with their mean
    validation accuracy and loss, oldest first). ``num_classes`` None (or 1, a regression): no
    chance level. ``diverged``: the runner's reason where it stopped the run on non-finite numbers."""
    untrained = [float(mean_loss[i]) for i, r in enumerate(rounds) if r == 0]
    keep = [i for i, r in enumerate(rounds) if r > 0]
    rounds = [int(rounds[i]) for i in keep]
    accuracy = np.array([mean_accuracy[i] for i in keep], dtype=float)
    loss = np.array([mean_loss[i] for i in keep], dtype=float)
    flags, notes = [], []
    if diverged is not None:
        flags.append(f"diverged: {diverged}")
    judged = accuracy.size >= JUDGED_EVALUATIONS
    classified = num_classes is not None and num_classes > 1
    if judged and classified:
        chance = 1.0 / num_classes
        last = accuracy[-JUDGED_EVALUATIONS:]
        if last.mean() <= CHANCE_FACTOR * chance:
            flags.append(f"at chance: mean accuracy {', '.join(f'{a:.3f}' for a in last)} at rounds "
                         f"{', '.join(map(str, rounds[-JUDGED_EVALUATIONS:]))} (chance {chance:.3f})")
        best = int(np.argmax(accuracy))
        gain = accuracy[best] - chance
        if gain > 0 and accuracy[-1] - chance < COLLAPSE_FRACTION * gain:
            flags.append(f"collapsed: mean accuracy {accuracy[-1]:.3f} at round {rounds[-1]}, against its best "
                         f"{accuracy[best]:.3f} at round {rounds[best]} (chance {chance:.3f})")
    if judged and untrained and np.all(loss[-JUDGED_EVALUATIONS:] > untrained[0]):
        flags.append(f"loss above untrained: mean validation loss {', '.join(f'{v:.4f}' for v in loss[-JUDGED_EVALUATIONS:])} "
                     f"at rounds {', '.join(map(str, rounds[-JUDGED_EVALUATIONS:]))}, the untrained model's {untrained[0]:.4f}")
    if not flags and loss.size > LOSS_RISES and np.all(np.isfinite(loss[-LOSS_RISES - 1:])):
        tail = loss[-LOSS_RISES - 1:]
        if np.all(np.diff(tail) > 0) and tail[-1] >= (1 + LOSS_RISE_FRACTION) * tail[0]:
            held = f", accuracy held ({accuracy[-1]:.3f}, best {accuracy.max():.3f})" if classified else ""
            notes.append(f"overfitting: mean validation loss {tail[0]:.4f} at round {rounds[-LOSS_RISES - 1]} to "
                         f"{tail[-1]:.4f} at round {rounds[-1]}, up at each of the last {LOSS_RISES} evaluations{held}")
    return Health(flags, notes)


def flag_note(flags: Sequence[str]) -> str:
    """The short table cell: which signs, or empty."""
    return "; ".join(f.split(":", 1)[0] for f in flags)
