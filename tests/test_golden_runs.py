"""Keep every number: a few small runs give byte-identical ``rounds.csv``, ``trace.csv`` and
``plans.jsonl`` to the files recorded in ``tests/golden/`` (``config.json`` may gain fields).

Record again (only when a change is meant to move the numbers):
``python -m tests.test_golden_runs``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scenarios.execution.runner import RunSpec, run_experiment

GOLDEN = Path(__file__).parent / "golden"
COMPARED = ("rounds.csv", "trace.csv", "plans.jsonl")
LOOP = {"backend": "loop"}

RUNS = {
    "fedavg": RunSpec("digits-rotation", "fedavg", rounds=3, seed=3, training=LOOP),
    "user-centric-auto": RunSpec("digits-rotation", "user-centric", rounds=3, seed=3, training=LOOP,
                                 options={"streams": "auto", "lam": 0.01}),
    "fedprox-partial-barrier": RunSpec("digits-concept-shift", "fedprox", system="wireless-fast-ul", mode="barrier", rounds=3,
                                       seed=5, participation=0.5, options={"mu": 0.5}, training=LOOP),
    "user-centric-k2-deadline": RunSpec("digits-rotation", "user-centric", rounds=2, seed=1, deadline=12.0, evaluate_every=2,
                                        options={"streams": 2, "variance_batches": "reference"}, training=LOOP),
    "user-centric-k2-umi": RunSpec("digits-rotation", "user-centric", system="umi-3.5ghz", rounds=2, seed=2,
                                   options={"streams": 2}, training=LOOP),
    "fedavg-fdd-fdma-deadline": RunSpec("digits-rotation", "fedavg", system="uma-2.1ghz", rounds=2, seed=4, deadline=0.03,
                                        radio={"uplink_access": "fdma"}, training=LOOP),
}


def produce(name: str, out_root: Path) -> Path:
    return Path(run_experiment(RUNS[name], out_root, reuse=False)["result_dir"])


@pytest.mark.parametrize("name", sorted(RUNS))
def test_run_matches_its_recorded_files(name, tmp_path):
    folder = produce(name, tmp_path)
    for file in COMPARED:
        assert (folder / file).read_bytes() == (GOLDEN / name / file).read_bytes(), f"{name}: {file} differs from the recording"


def record() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for name in RUNS:
            folder = produce(name, Path(tmp))
            (GOLDEN / name).mkdir(parents=True, exist_ok=True)
            for file in COMPARED:
                (GOLDEN / name / file).write_bytes((folder / file).read_bytes())
            print(f"recorded {name}", file=sys.stderr)


if __name__ == "__main__":
    import torch

    torch.set_num_threads(1)
    record()
