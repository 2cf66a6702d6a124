"""Keep every number: a few small runs give the ``rounds.csv``, ``trace.csv`` and ``plans.jsonl``
recorded in ``tests/golden/`` (``config.json`` may gain fields).

What must be identical and what may differ in the last digits (``docs/trust.md``): the clock,
bits, counts, traces and plans are compared exactly, as text; the floats that training
produces (``mean_accuracy``, ``worst_accuracy``, ``mean_loss``, ``accuracy_*``) to a relative
``TRAINING_RTOL``, since another CPU model or torch build rounds them differently (about 1e-8
relative in the loss) while one evaluation more or less right moves an accuracy by a whole
sample's share (here at least 1/23). On a physical cell the clock's and the energies' floats
come from path loss, powers and rates, which numpy's ``log10``, ``power`` and ``exp`` compute
on the CPU's vector unit, so another CPU model moves their last bits (about 1e-16 relative):
they are compared to ``PHYSICS_RTOL``, as are the bits of a transmission cut at a deadline
(its rate times its time); whole bit counts, counts, kinds, entities and plans exactly.

Record again (only when a change is meant to move the numbers):
``python -m tests.test_golden_runs``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from child_env import checkout_environment
from scenarios.definitions.cells import CELLS
from scenarios.execution.runner import RunSpec, run_experiment

GOLDEN = Path(__file__).parent / "golden"
COMPARED = ("rounds.csv", "trace.csv", "plans.jsonl")
LOOP = {"backend": "loop"}
TRAINING_RTOL = 1e-6  # training floats across CPU models and torch builds
TRAINING_COLUMNS = ("mean_accuracy", "worst_accuracy", "mean_loss")
PHYSICS_RTOL = 1e-12  # a cell's times and energies across CPU models (numpy's vector units)
PHYSICS_COLUMNS = ("time", "duration", "start", "end", "round_energy_j", "energy_j")

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
                                        radio={"uplink_access": "fdma", "link_abstraction": "nr"}, training=LOOP),
}


def produce(name: str, out_root: Path) -> Path:
    return Path(run_experiment(RUNS[name], out_root, reuse=False)["result_dir"])


def _tolerance(column: str, a: float, b: float, on_a_cell: bool) -> float | None:
    """The relative tolerance of a column's floats, None where they must be the same text."""
    if column in TRAINING_COLUMNS or column.startswith("accuracy_"):
        return TRAINING_RTOL
    if not on_a_cell:
        return None
    if column in PHYSICS_COLUMNS or column.startswith("energy_j_"):
        return PHYSICS_RTOL
    if column.endswith("bits") and not (a.is_integer() and b.is_integer()):
        return PHYSICS_RTOL  # a transmission cut at a deadline: its rate times its time
    return None


def _same_cell(column: str, made: str, recorded: str, on_a_cell: bool) -> bool:
    if made == recorded:
        return True
    if "" in (made, recorded):
        return False
    a, b = float(made), float(recorded)
    rtol = _tolerance(column, a, b, on_a_cell) if math.isfinite(a) and math.isfinite(b) else None
    return rtol is not None and math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12 * (rtol == TRAINING_RTOL))


def _table_differences(file: str, folder: Path, recording: Path, on_a_cell: bool) -> list[str]:
    made_rows = list(csv.reader(io.StringIO((folder / file).read_text())))
    recorded_rows = list(csv.reader(io.StringIO((recording / file).read_text())))
    if len(made_rows) != len(recorded_rows) or made_rows[:1] != recorded_rows[:1]:
        return [f"{file}: other rows or columns"]
    found = []
    for line, (made, recorded) in enumerate(zip(made_rows[1:], recorded_rows[1:]), start=2):
        where = f"round {made[0]}" if file == "rounds.csv" else made[1]  # the round, or the trace event's kind
        found += [f"{file} line {line} ({where}) {column}: {a} (recorded {b})"
                  for column, a, b in zip(made_rows[0], made, recorded) if not _same_cell(column, a, b, on_a_cell)]
    return found


def differences(folder: Path, recording: Path, on_a_cell: bool = False) -> list[str]:
    """Where ``folder``'s files differ from ``recording``'s: exactly, except training floats and,
    ``on_a_cell``, the clock's and the energies' floats."""
    found = _table_differences("rounds.csv", folder, recording, on_a_cell)
    found += _table_differences("trace.csv", folder, recording, on_a_cell)
    if (folder / "plans.jsonl").read_bytes() != (recording / "plans.jsonl").read_bytes():
        found.append("plans.jsonl differs")
    return found


def on_a_cell(name: str) -> bool:
    return RUNS[name].system in CELLS


@pytest.mark.parametrize("name", sorted(RUNS))
def test_run_matches_its_recorded_files(name, tmp_path):
    assert differences(produce(name, tmp_path), GOLDEN / name, on_a_cell(name)) == []


def _edited_copy(tmp_path: Path, file: str, edit) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(GOLDEN / "fedavg", copy)
    (copy / file).write_text(edit((copy / file).read_text()))
    return copy


def _edit_rounds(column: str, change):
    def edit(text: str) -> str:
        rows = list(csv.DictReader(io.StringIO(text)))
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            row[column] = repr(change(float(row[column])))
            writer.writerow(row)
        return out.getvalue()
    return edit


def test_training_floats_off_in_the_last_digits_still_match(tmp_path):
    """As on another CPU: every loss 1e-8 relative away, an accuracy 1e-9 away."""
    copy = _edited_copy(tmp_path, "rounds.csv", _edit_rounds("mean_loss", lambda v: v * (1 + 1e-8)))
    (copy / "rounds.csv").write_text(_edit_rounds("accuracy_3", lambda v: v + 1e-9)((copy / "rounds.csv").read_text()))
    assert (copy / "rounds.csv").read_text() != (GOLDEN / "fedavg" / "rounds.csv").read_text()
    assert differences(copy, GOLDEN / "fedavg") == []


@pytest.mark.parametrize("column, change", [
    ("mean_loss", lambda v: v * (1 + 1e-5)),
    ("mean_accuracy", lambda v: v + 1 / 23),  # one validation sample more right
    ("accuracy_0", lambda v: v * (1 + 1e-5)),
    ("time", lambda v: v * (1 + 1e-15) if v else v + 5e-324),  # the last bit of the clock
    ("uplink_bits", lambda v: v + 1),
    ("arrived", lambda v: v - 1),
], ids=["loss", "mean-accuracy", "device-accuracy", "time", "bits", "arrivals"])
def test_a_real_change_is_caught(tmp_path, column, change):
    copy = _edited_copy(tmp_path, "rounds.csv", _edit_rounds(column, change))
    found = differences(copy, GOLDEN / "fedavg")
    assert found and all(column in line for line in found)


def test_a_changed_trace_or_plan_is_caught(tmp_path):
    trace = _edited_copy(tmp_path / "trace", "trace.csv", lambda text: text.replace("153920.0", "153921.0", 1))
    assert differences(trace, GOLDEN / "fedavg") == ["trace.csv line 2 (downlink) bits: 153921.0 (recorded 153920.0)"]
    plans = _edited_copy(tmp_path / "plans", "plans.jsonl",
                         lambda text: text.replace("[0, 1, 2,", "[0, 2, 1,", 1))  # two listeners swapped
    assert differences(plans, GOLDEN / "fedavg") == ["plans.jsonl differs"]


def test_a_cells_clock_and_energy_may_move_in_their_last_bits_and_no_further(tmp_path):
    """On a cell (only there) a time or an energy 1e-15 relative away matches; 1e-9 away, or a
    bit count one bit away, is caught."""
    name = "user-centric-k2-umi"

    def copy(column: str, change) -> Path:
        folder = tmp_path / f"{column}-{len(list(tmp_path.iterdir()))}"
        shutil.copytree(GOLDEN / name, folder)
        (folder / "rounds.csv").write_text(_edit_rounds(column, change)((folder / "rounds.csv").read_text()))
        return folder

    for column in ("time", "energy_j_3"):
        nudged = copy(column, lambda v: v * (1 + 1e-15))
        assert (nudged / "rounds.csv").read_text() != (GOLDEN / name / "rounds.csv").read_text()
        assert differences(nudged, GOLDEN / name, on_a_cell=True) == []
        assert differences(nudged, GOLDEN / name, on_a_cell=False)  # off a cell the clock is exact
        assert differences(copy(column, lambda v: v * (1 + 1e-9)), GOLDEN / name, on_a_cell=True)
    assert differences(copy("uplink_bits", lambda v: v + 1), GOLDEN / name, on_a_cell=True)


def test_another_vector_unit_keeps_the_promise():
    """The six runs again in a process whose numpy and torch use this CPU's older vector
    instructions only (numpy's ``NPY_DISABLE_CPU_FEATURES``, torch's ``ATEN_CPU_CAPABILITY``), as
    on another CPU model: everything matches by the rules above. Skipped where numpy dispatches
    nothing above its baseline here (nothing older to fall back to)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:
        pytest.skip("this numpy does not say which vector instructions it dispatches to")
    newer = [feature for feature in __cpu_dispatch__ if __cpu_features__.get(feature)]
    if not newer:
        pytest.skip("numpy uses no vector instructions above its baseline on this CPU")
    code = ("import json, sys, tempfile, torch; torch.set_num_threads(1); from pathlib import Path; "
            "from test_golden_runs import GOLDEN, RUNS, differences, on_a_cell, produce\n"
            "with tempfile.TemporaryDirectory() as tmp:\n"
            "    print(json.dumps({n: differences(produce(n, Path(tmp)), GOLDEN / n, on_a_cell(n)) for n in RUNS}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=600,
                          env=checkout_environment(NPY_DISABLE_CPU_FEATURES=",".join(newer), ATEN_CPU_CAPABILITY="default"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {name: [] for name in RUNS}


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
