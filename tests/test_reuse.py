"""learning.reuse: a call made again with the same model, parameters, data objects and batches is
looked up, not computed, only while results are kept; a reused result is the computed one bit
for bit, and a command's runs give the numbers they give alone."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import torch

from learning import reuse
from learning.data import DeviceData
from learning.models import MODELS
from learning.training import LocalTraining, Trainer


def _trainer() -> Trainer:
    torch.manual_seed(0)
    return Trainer(MODELS["mlp"](in_features=4, num_classes=3, hidden=5), LocalTraining(backend="loop", device="cpu"))


def _devices(count: int, seed: int = 0) -> list[DeviceData]:
    g = torch.Generator().manual_seed(seed)
    return [DeviceData(torch.rand(9, 4, generator=g), torch.randint(0, 3, (9,), generator=g),
                       torch.rand(7, 4, generator=g), torch.randint(0, 3, (7,), generator=g)) for _ in range(count)]


def _counted(trainer: Trainer) -> dict[str, int]:
    counts = {"evaluate": 0, "gradients": 0}
    backend = trainer.backend
    for kind in counts:
        def wrapped(*args, _kind=kind, _method=getattr(backend, kind)):
            counts[_kind] += 1
            return _method(*args)
        setattr(backend, kind, wrapped)
    return counts


def test_nothing_is_kept_by_default():
    trainer, datas = _trainer(), _devices(2)
    counts = _counted(trainer)
    params = torch.zeros(2, trainer.num_parameters)
    for _ in range(2):
        trainer.evaluate_many(params, datas)
    assert counts == {"evaluate": 2, "gradients": 0}


def test_the_same_call_is_looked_up_and_any_other_computed():
    trainer, datas = _trainer(), _devices(3)
    theta = torch.randn(3, trainer.num_parameters, generator=torch.Generator().manual_seed(1))
    batches = [torch.tensor([0, 2, 4]), None, torch.tensor([1])]

    def gradients_kept(params, batches):  # a call through learning.reuse, as the user-centric set-up makes it
        return reuse.reuse("gradients", trainer, params, datas, batches, lambda: trainer.mean_gradients(params, datas, batches))

    alone = trainer.evaluate_many(theta, datas), trainer.mean_gradients(theta, datas, batches)
    with reuse.kept():
        counts = _counted(trainer)
        for _ in range(2):
            accuracy, loss = trainer.evaluate_many(theta.clone(), datas)
            gradients = gradients_kept(theta.clone(), [None if b is None else b.clone() for b in batches])
            assert np.array_equal(accuracy, alone[0][0]) and np.array_equal(loss, alone[0][1])
            assert torch.equal(gradients, alone[1])
        assert counts == {"evaluate": 1, "gradients": 1}
        gradients.add_(1.0)  # what a caller does to its result is not kept
        assert torch.equal(gradients_kept(theta, batches), alone[1]) and counts["gradients"] == 1
        other = theta.clone()
        other[2, 0] += 1e-6
        trainer.evaluate_many(other, datas)  # other parameters
        trainer.evaluate_many(theta, _devices(3))  # equal data, other objects
        gradients_kept(theta, [torch.tensor([0, 2, 5]), None, torch.tensor([1])])  # other batches
        assert counts == {"evaluate": 3, "gradients": 2}
        again = _trainer()  # the same model and settings in another trainer (another run): looked up
        counts_again = _counted(again)
        again.evaluate_many(theta, datas)
        assert counts_again["evaluate"] == 0
    counts_after = _counted(trainer)
    trainer.evaluate_many(theta, datas)
    assert counts_after["evaluate"] == 1  # forgotten after the block


def test_another_model_or_setting_is_computed():
    datas = _devices(2)
    with reuse.kept():
        first = _trainer()
        theta = torch.zeros(2, first.num_parameters)
        first.evaluate_many(theta, datas)
        for other in (Trainer(MODELS["mlp"](in_features=4, num_classes=3, hidden=5), LocalTraining(backend="loop", device="cpu", lr=0.5)),
                      Trainer(first.model, LocalTraining(backend="loop", device="cpu"), eval_batch=4)):
            counts = _counted(other)
            other.evaluate_many(theta, datas)
            assert counts["evaluate"] == 1


def test_runs_in_turn_give_the_numbers_they_give_alone(tmp_path, monkeypatch):
    from learning.engine.loop import Backend
    from scenarios.execution.runner import run_experiment
    from scenarios.execution.spec import RunSpec

    computed = {"evaluate": 0, "gradients": 0}
    for kind in computed:
        def counting(self, *args, _kind=kind, _method=getattr(Backend, kind)):
            computed[_kind] += 1
            return _method(self, *args)
        monkeypatch.setattr(Backend, kind, counting)

    def run(spec, where):
        summary = run_experiment(spec, where)
        rounds = (Path(summary["result_dir"]) / "rounds.csv").read_text()
        return {k: v for k, v in summary.items() if k not in ("result_dir", "reused")}, rounds

    specs = [RunSpec("digits-rotation", "user-centric", rounds=2, options={"streams": streams}, training={"backend": "loop"})
             for streams in (None, 2)]
    specs.append(RunSpec("digits-rotation", "fedavg", rounds=2, training={"backend": "loop"}))
    alone = [run(spec, tmp_path / f"alone{i}") for i, spec in enumerate(specs)]
    computed_alone = dict(computed)
    with reuse.kept():
        in_turn = [run(spec, tmp_path / "in-turn") for spec in specs]
    assert in_turn == alone
    # in turn: the second user-centric run looks the set-up up; the later runs the round-0 evaluation
    assert computed["gradients"] - computed_alone["gradients"] == computed_alone["gradients"] - 1
    assert computed["evaluate"] - computed_alone["evaluate"] == computed_alone["evaluate"] - 2


def test_a_scenarios_data_is_one_object_however_its_arguments_are_given():
    """The runs of a command share the very data objects (what learning.reuse keys on)."""
    from scenarios.execution.build import scenario_data

    data = scenario_data("digits-rotation", 0)
    assert scenario_data("digits-rotation", np.int64(0), None, ()) is data
    assert scenario_data("digits-rotation", 0, data_dir=None, knobs=()) is data


def _jobs(trainer: Trainer, datas: list[DeviceData], seed: int = 5, **hooks) -> list:
    from learning.training import LocalJob

    start = torch.randn(trainer.num_parameters, generator=torch.Generator().manual_seed(seed))
    return [LocalJob(start, data, torch.Generator().manual_seed(seed + k), state_key=("model", k), **hooks)
            for k, data in enumerate(datas)]


def _trained_jobs(trainer: Trainer) -> list[int]:
    counts = []
    method = trainer.backend.train
    trainer.backend.train = lambda jobs: counts.append(len(jobs)) or method(jobs)
    return counts


def test_a_local_update_made_again_is_looked_up_with_its_generator_and_adam_state():
    """The same local update (start, data object, generator state, Adam state, hooks) in another
    run is looked up: its vector, where it leaves its generator and its Adam state are those of
    training it, bit for bit; any other job is trained."""
    for optimizer in ("sgd", "adam"):
        datas = _devices(3)

        def fresh() -> Trainer:
            torch.manual_seed(0)
            return Trainer(MODELS["mlp"](in_features=4, num_classes=3, hidden=5), LocalTraining(backend="loop", device="cpu",
                                                                                                optimizer=optimizer))

        alone, jobs = fresh(), _jobs(fresh(), datas)
        expected = alone.train_many(jobs)
        generators = [job.generator.get_state() for job in jobs]
        states = dict(alone.optimizer_states)
        with reuse.kept():
            first = fresh()
            first.train_many(_jobs(first, datas))
            again = fresh()
            trained = _trained_jobs(again)
            jobs_again = _jobs(again, datas)
            assert torch.equal(again.train_many(jobs_again), expected) and trained == []
            assert all(torch.equal(job.generator.get_state(), g) for job, g in zip(jobs_again, generators))
            assert set(again.optimizer_states) == set(states)
            for key, state in states.items():
                kept = again.optimizer_states[key]
                assert torch.equal(kept.exp_avg, state.exp_avg) and torch.equal(kept.exp_avg_sq, state.exp_avg_sq)
                assert kept.step == state.step
            # a second round continues from that state: the same as training both rounds
            other = fresh()
            for hooks in ({"proximal": 0.5, "anchor": torch.zeros(other.num_parameters)}, {"seed": 6}):
                trained = _trained_jobs(other)
                other.train_many(_jobs(other, datas, **hooks))
                assert trained == [3], hooks  # another hook or generator state: trained


def test_jobs_that_share_a_generator_are_trained_not_looked_up():
    trainer, datas = _trainer(), _devices(2)
    jobs = _jobs(trainer, datas)
    jobs[1] = dataclasses.replace(jobs[1], generator=jobs[0].generator)  # the second job's draws follow the first's
    with reuse.kept():
        trainer.train_many(_jobs(trainer, datas))
        trained = _trained_jobs(trainer)
        trainer.train_many(jobs)
        assert trained == [2]


def test_first_local_updates_alike_are_trained_once_and_runs_give_their_numbers_alone(tmp_path, monkeypatch):
    """FedAvg, CFL, Local and Ditto in turn (SGD and Adam): every run's files as alone, and
    fewer local updates trained."""
    from learning.engine.loop import Backend
    from scenarios.execution.runner import run_experiment
    from scenarios.execution.spec import RunSpec

    trained = [0]
    train = Backend.train
    monkeypatch.setattr(Backend, "train", lambda self, jobs: trained.__setitem__(0, trained[0] + len(jobs)) or train(self, jobs))

    def run(spec, where):
        folder = Path(run_experiment(spec, where)["result_dir"])
        return [(folder / name).read_text() for name in ("rounds.csv", "devices.csv", "trace.csv", "summary.json")]

    for optimizer in ("sgd", "adam"):
        specs = [RunSpec("digits-rotation", algorithm, rounds=2, participation=0.5,
                         training={"backend": "loop", "optimizer": optimizer}) for algorithm in ("fedavg", "cfl", "local", "ditto")]
        trained[0] = 0
        alone = [run(spec, tmp_path / f"alone-{optimizer}-{i}") for i, spec in enumerate(specs)]
        trained_alone = trained[0]
        trained[0] = 0
        with reuse.kept():
            in_turn = [run(spec, tmp_path / f"in-turn-{optimizer}") for spec in specs]
        assert [[text.replace(f"in-turn-{optimizer}", "") for text in files] for files in in_turn] == \
               [[text.replace(f"alone-{optimizer}-{i}", "") for text in files] for i, files in enumerate(alone)]
        assert trained[0] < trained_alone - 10, (trained[0], trained_alone)  # CFL's, Local's and Ditto's first updates looked up
