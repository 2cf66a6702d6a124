"""The silhouette curve of a scenario's collaboration vectors (journal IV-C, Fig. 5): the
user-centric set-up (gradients and eq. 10 variances at the initial model, eq. 9 weights), then
k-means on W's rows for every k, as Algorithm 2 sees them before training starts."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from scenarios.records.atomic import atomic_write_text, json_text
from scenarios.records.provenance import provenance_problem
from scenarios.records.reading import read_json

FORMAT_VERSION = 2  # 2: the provenance kept beside the config


def silhouette_spec(spec):
    """``spec`` as the user-centric run whose set-up computes the curve (``streams = auto``)."""
    return dataclasses.replace(spec, algorithm="user-centric", options={**spec.options, "streams": "auto"})


def setup_silhouette(prepared, cache_dir: Path | None = None) -> dict[int, float]:
    """``k -> s_k`` for a built user-centric run with ``streams = auto`` (its options, training
    and seed) after the set-up round.

    With ``cache_dir``, the curve is kept there as JSON with the learner's resolved config and
    the provenance of the run that would train on it, and read back, not recomputed, while the
    config is the same and the fl-cosim version, code and dataset files are those it was computed
    with (``provenance_problem``, as a run folder is reused).
    """
    learner, spec, scenario = prepared.learner, prepared.run.spec, prepared.run.scenario
    if spec.algorithm != "user-centric" or learner.options.streams != "auto":
        raise ValueError("the silhouette curve is the set-up of a user-centric run with streams = auto")
    config = json.loads(json.dumps({
        "format_version": FORMAT_VERSION,
        "scenario": {"name": scenario.name, "version": scenario.version},
        "algorithm_options": learner.options.as_dict(),
        "model": {"name": scenario.model_name, "kwargs": scenario.model_kwargs},
        "training": dataclasses.asdict(learner.setup.training),
        "seed": spec.seed,
    }, allow_nan=False))
    now = prepared.config["provenance"]
    path = None if cache_dir is None else Path(cache_dir) / f"silhouette_{spec.scenario}_s{spec.seed}.json"
    if path is not None and path.exists():
        try:
            kept = read_json(path)
            then = kept.get("provenance")
            if kept["config"] == config and isinstance(then, dict) and provenance_problem(then, now) is None:
                return {int(k): float(s) for k, s in kept["silhouette"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):  # AttributeError: not a JSON object
            pass  # unreadable, or of other code or data: computed again and rewritten below
    everyone = range(learner.num_devices)
    learner.local_update(0, everyone)  # the set-up phase's computation; no network needed here
    learner.aggregate(0, everyone)
    curve = dict(learner.silhouette)
    if path is not None:
        atomic_write_text(path, json_text({"config": config, "provenance": now, "silhouette": {str(k): s for k, s in curve.items()}}))
    return curve
