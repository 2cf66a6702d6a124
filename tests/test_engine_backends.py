"""Backends are objects their trainer owns: made once from the settings' name (``BACKENDS``),
inheriting the reference loop's methods they do not replace, and closed with the trainer."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from learning.data import DeviceData
from learning.engine import BACKENDS, Backend, BatchedBackend, CompiledBackend, ProcessesBackend
from learning.local_training import BACKEND_NAMES
from learning.engine import workers
from learning.models import build_model
from learning.training import LocalJob, LocalTraining, Trainer


def datas(count: int = 4) -> list[DeviceData]:
    generator = torch.Generator().manual_seed(0)
    return [DeviceData(torch.randn(9 + k, 6, generator=generator), torch.randint(0, 3, (9 + k,), generator=generator),
                       torch.randn(4, 6, generator=generator), torch.randint(0, 3, (4,), generator=generator))
            for k in range(count)]


def trainer(backend: str) -> Trainer:
    model = build_model("mlp", torch.Generator().manual_seed(1), in_features=6, num_classes=3, hidden=5)
    return Trainer(model, LocalTraining(lr=0.05, batch_size=4, backend=backend, device="cpu"))


def jobs(t: Trainer, data: list[DeviceData]) -> list[LocalJob]:
    start = torch.randn(t.num_parameters, generator=torch.Generator().manual_seed(2)) * 0.1
    return [LocalJob(start, d, torch.Generator().manual_seed(k)) for k, d in enumerate(data)]


def test_an_unknown_backend_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="training backend must be one of auto, loop, batched, compiled, processes, got 'fast'"):
        LocalTraining(backend="fast")


def test_the_trainer_makes_its_backend_once_from_the_registry():
    assert BACKENDS == {"loop": Backend, "batched": BatchedBackend, "compiled": CompiledBackend,
                        "processes": ProcessesBackend}
    assert tuple(BACKENDS) == BACKEND_NAMES  # the settings' choices, declared without torch
    for name, kind in BACKENDS.items():
        problem = kind.unavailable("cpu")  # compiled, where torch cannot build its kernels: refused as made
        if problem is not None:
            with pytest.raises(ValueError, match=re.escape(problem)):
                trainer(name)
            continue
        t = trainer(name)
        assert type(t.backend) is kind and t.backend.trainer is t
    t = trainer("batched")
    engine = t.backend.engine
    t.train_many(jobs(t, datas()))
    assert t.backend.engine is engine  # its caches live on the backend, kept across calls
    t.close()
    assert t.backend.engine is not engine  # closed: made afresh on next use


def test_one_job_by_the_reference_is_the_loop_backends_row():
    data = datas()
    loop = trainer("loop")
    rows = loop.train_many(jobs(loop, data))
    assert all(torch.equal(loop.train(job), row) for job, row in zip(jobs(loop, data), rows))


def test_a_backend_without_its_own_gradients_or_evaluation_gives_the_loops_numbers():
    data = datas()
    models = torch.randn(len(data), trainer("loop").num_parameters, generator=torch.Generator().manual_seed(3))
    batches = [None, torch.tensor([0, 2, 2]), None, torch.arange(5)]
    loop, processes = trainer("loop"), trainer("processes")
    assert torch.equal(processes.mean_gradients(models, data, batches), loop.mean_gradients(models, data, batches))  # one worker: here

    class TrainsOnly(Backend):
        def train(self, jobs):
            return torch.zeros(len(jobs), self.trainer.num_parameters)

    t = trainer("loop")
    t.backend = TrainsOnly(t)
    assert torch.equal(t.mean_gradients(models, data, batches), loop.mean_gradients(models, data, batches))
    expected = loop.evaluate_many(models, data)
    got = t.evaluate_many(models, data)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    assert not t.train_many(jobs(t, data)).any()


@pytest.mark.skipif(not workers.SUPPORTED, reason="worker processes need Linux (fork, memfd)")
def test_closing_a_trainer_stops_its_workers_and_no_other_trainers():
    data = datas()
    first, second = trainer("processes"), trainer("processes")
    workers.set_workers(2)
    try:
        expected = trainer("loop").train_many(jobs(first, data))
        assert torch.equal(first.train_many(jobs(first, data)), expected)
        second.train_many(jobs(second, data))
        ours, theirs = first.backend.pool.pids, second.backend.pool.pids
        assert all(_alive(pid) for pid in ours + theirs)
        first.close()
        assert first.backend.pool is None and not any(_alive(pid) for pid in ours)
        assert all(_alive(pid) for pid in theirs) and not second.backend.pool.closed
        assert torch.equal(first.train_many(jobs(first, data)), expected)  # a fresh pool, the same numbers
        assert not set(first.backend.pool.pids) & set(ours)
    finally:
        first.close()
        second.close()
        workers.set_workers(1)
    assert not workers._open_pools


def _alive(pid: int) -> bool:
    """Running (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_devices_sharing_validation_inputs_and_a_model_cost_one_forward_pass():
    """Concept shift: every device validates on one input tensor under its own labels. Pairs with
    that tensor and equal models share a forward pass; each pair's numbers are its own
    ``Trainer.evaluate``'s, bit for bit; a copy of the inputs (another tensor) is not shared."""
    generator = torch.Generator().manual_seed(3)
    shared = torch.randn(7, 6, generator=generator)
    labels = [torch.randint(0, 3, (7,), generator=generator) for _ in range(5)]
    train = torch.randn(9, 6, generator=generator), torch.randint(0, 3, (9,), generator=generator)
    data = [DeviceData(*train, shared if k < 4 else shared.clone(), labels[k]) for k in range(5)]
    t = trainer("loop")
    t.eval_batch = 3  # chunks of 3, 3 and 1 samples
    one, other = torch.randn(t.num_parameters, generator=generator), torch.randn(t.num_parameters, generator=generator)
    models = torch.stack([one, other, one, one, one])
    forwards = []
    t.model.register_forward_hook(lambda module, inputs, output: forwards.append(inputs[0].shape[0]))
    accuracy, loss = t.evaluate_many(models, data)
    assert forwards == [3, 3, 1] * 3  # devices 0, 2 and 3 once, device 1 (other model), device 4 (other tensor)
    each = [t.evaluate(m, d.x_val, d.y_val) for m, d in zip(models, data)]
    assert accuracy.tolist() == [a for a, _ in each] and loss.tolist() == [l for _, l in each]
    assert len(set(loss.tolist())) > 1  # the labels differ, so do the numbers
