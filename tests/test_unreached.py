"""Which model a device is scored on when the models sent to it do not reach it
(learning.evaluation.Reach, FederatedLearner.hold, --unreached): the one it holds (the last it
received, with what it trained from it, else the initial one) or none (excluded), for a
broadcast (FedAvg), a per-stream (user-centric) and a stateful (SCAFFOLD, Ditto) algorithm,
through the engine's round loop; and a battery run whose flat devices keep their accuracy in
devices.csv."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
import simpy

from contract import RoundOutcome
from netsim.clock.engine import LoopHooks, cosimulation_process
from netsim.clock.recorder import Recorder
from scenarios.errors import UsageError
from scenarios.execution.runner import RunSpec, run_experiment
from tiny_learners import build, scalar_data


def missing_round(missed_by_round: dict[int, tuple[int, ...]]):
    """A round process whose ``missed_by_round[round]`` devices are absent (``battery``): not
    received, not computed, dropped; every other participant receives, computes and arrives."""
    def process(env, plan, system, model_bits, rng, trace, server_round):
        missed = missed_by_round.get(server_round, ())
        received = tuple(d for d in plan.participants if d not in missed)
        yield env.timeout(1.0)
        return RoundOutcome(received, received, received, {d: "battery" for d in missed if d in plan.participants}), None, None
    return process


def run_loop(learner, rounds: int, missed_by_round: dict[int, tuple[int, ...]]) -> list:
    """The engine's round loop on ``learner`` with the absences given; each round's evaluation."""
    env, evaluations = simpy.Environment(), []
    recorder = Recorder(env, rounds, on_round=lambda record: evaluations.append(record.evaluation))  # every round evaluated
    hooks = LoopHooks(missing_round(missed_by_round), recorder)
    env.process(cosimulation_process(env, learner, None, rounds, None, [], hooks))
    env.run()
    return evaluations


DATA = [[1.0], [3.0]]  # device 0 validates on 1, device 1 on 3: the loss of a model m on device d is (y_d - m)^2


def test_fedavg_scores_a_device_its_model_missed_on_the_one_it_received():
    """Hand-computed (lr 0.1, full batch: a local step is m -> 0.8 m + 0.2 y): round 1 both
    receive 0 and the global model becomes (0.2 + 0.6) / 2 = 0.4; in rounds 2 and 3 device 1 is
    flat, device 0 alone makes 0.52 and 0.616; device 1 still holds 0 (received in round 1),
    loss 9; in round 4 it receives 0.616 again and is scored on the new global model."""
    learner = build("fedavg", scalar_data(DATA))
    evaluations = run_loop(learner, 4, {2: (1,), 3: (1,)})
    losses = np.array([e.loss for e in evaluations])
    assert losses[1] == pytest.approx([0.6**2, 2.6**2])
    assert losses[2] == pytest.approx([0.48**2, 9.0])  # the old code scored w_2 = 0.52: 2.48^2
    assert losses[3] == pytest.approx([0.384**2, 9.0])
    w4 = ((0.8 * 0.616 + 0.2) + (0.8 * 0.616 + 0.6)) / 2
    assert losses[4] == pytest.approx([(1 - w4) ** 2, (3 - w4) ** 2])
    assert evaluations[2].mean_loss == pytest.approx((0.48**2 + 9.0) / 2)


def test_excluded_leaves_the_device_out_of_the_scores():
    learner = build("fedavg", scalar_data(DATA))
    learner.reach.unreached = "excluded"
    evaluations = run_loop(learner, 4, {2: (1,), 3: (1,)})
    assert [e.excluded for e in evaluations] == [(), (), (1,), (1,), ()]
    assert math.isnan(evaluations[2].loss[1]) and evaluations[2].loss[0] == pytest.approx(0.48**2)
    assert evaluations[2].mean_loss == pytest.approx(0.48**2)
    assert evaluations[4].mean_loss == pytest.approx(float(np.mean(evaluations[4].loss)))


@pytest.mark.parametrize("name, options, kept_from, live_moved", [
    ("fedavg", {}, 0, True), ("scaffold", {}, 0, True), ("user-centric", {"streams": 2}, 0, True), ("ditto", {}, 1, False)])
def test_every_kind_of_algorithm_keeps_what_the_device_holds(name, options, kept_from, live_moved):
    """Device 1 misses rounds 2 and 3 (received in round 1): a broadcast or per-stream model
    (FedAvg, SCAFFOLD, user-centric with two streams: devices 1 and 2 share one) is the one it
    received in round 1, scored as it was after round 0, though the server's model for it moved
    on; Ditto's personal model is the one it
    trained in round 1 (scored as after round 1), which no later round changed."""
    learner = build(name, scalar_data([[1.0, 1.1], [3.0, 2.9], [3.0, 3.1], [1.0, 0.9]]), **options)
    evaluations = run_loop(learner, 3, {2: (1,), 3: (1,)})
    kept = evaluations[kept_from].loss[1]
    assert [e.loss[1] for e in evaluations[2:]] == pytest.approx([kept, kept])
    live = (3.0 - float(learner.personal_model(1))) ** 2  # what the old code scored
    assert (live != pytest.approx(kept)) == live_moved


def test_everyone_reached_scores_as_before():
    """No device misses: the scores are the live models' (the mechanism changes nothing)."""
    learner = build("fedavg", scalar_data(DATA))
    evaluations = run_loop(learner, 2, {})
    assert all(e.excluded == () for e in evaluations)
    assert learner.reach.unreached_devices == []
    model = float(learner.theta[0])
    assert evaluations[-1].loss == pytest.approx([(1 - model) ** 2, (3 - model) ** 2])


def _device_rows(folder: Path) -> dict[int, list[dict]]:
    rows: dict[int, list[dict]] = {}
    with open(folder / "devices.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            rows.setdefault(int(row["device"]), []).append(row)
    return rows


def test_a_flat_device_keeps_the_accuracy_of_the_model_it_holds(tmp_path):
    """FedAvg on UMa with 2 J batteries (digits, seed 0, 6 rounds): a device last received its
    model in round k (the global model after round k - 1) and is absent from then on; its
    accuracy in devices.csv from round k + 1 on is its accuracy after round k - 1."""
    spec = RunSpec("digits-rotation", "fedavg", system="uma-3.5ghz", rounds=6, seed=0, radio={"battery_j": 2.0},
                   training={"backend": "loop"})
    folder = Path(run_experiment(spec, tmp_path, reuse=False)["result_dir"])
    flat = 0
    for device, rows in _device_rows(folder).items():
        received = [int(r["round"]) for r in rows if r["received"] == "1"]
        if not received or received[-1] == 6 or received != list(range(1, received[-1] + 1)):
            continue
        last = received[-1]
        if last < 2:
            continue
        flat += 1
        held = rows[last - 1]["accuracy"]
        assert [r["accuracy"] for r in rows[last + 1:]] == [held] * (6 - last), device
    assert flat >= 1


def test_excluded_devices_have_empty_cells_and_the_means_are_over_the_others(tmp_path):
    """The same run with --unreached excluded: from a missed model (received 0 while scheduled)
    until the next one received, a device's accuracy cell is empty; rounds.csv's mean is over
    the cells left."""
    spec = RunSpec("digits-rotation", "fedavg", system="uma-3.5ghz", rounds=4, seed=0, radio={"battery_j": 2.0},
                   training={"backend": "loop"}, unreached="excluded")
    folder = Path(run_experiment(spec, tmp_path, reuse=False)["result_dir"])
    rows = _device_rows(folder)
    excluded = 0
    for device, mine in rows.items():
        unreached = False
        for r in mine:
            if r["scheduled"] == "1":
                unreached = r["received"] == "0"
            assert (r["accuracy"] == "") == unreached, (device, r["round"])
            excluded += unreached
    assert excluded
    with open(folder / "rounds.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            cells = [float(mine[int(row["round"])]["accuracy"]) for mine in rows.values() if mine[int(row["round"])]["accuracy"]]
            assert float(row["mean_accuracy"]) == pytest.approx(np.mean(cells))


def test_excluded_is_refused_where_every_model_arrives(tmp_path):
    with pytest.raises(UsageError, match="every model reaches its device"):
        run_experiment(RunSpec("digits-rotation", "fedavg", rounds=1, unreached="excluded"), tmp_path, reuse=False)
    assert not any(tmp_path.iterdir())
