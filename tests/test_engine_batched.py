"""The batched engine job by job against the reference loop: mini-batch orders (shared
generators, unused epochs), ragged work (partial batches, max_steps, jobs without steps),
hooks, Adam's state (shared keys run in waves), chunks, the device data cache, batched
evaluation and gradients, the command line, and the same on CUDA where there is one."""

from __future__ import annotations

import gc
import json
import sys

import numpy as np
import pytest
import torch

from learning.data import DeviceData
from learning.engine import Backend
from learning.engine.batched import BatchedEngine, CompiledBackend, draw_schedules
from learning.models import build_model
from learning.training import LocalJob, LocalTraining, Trainer
from scenarios.cli.main import main
from tiny_learners import build, run_round, scalar_data

RTOL, ATOL = 1e-4, 1e-5
SIZES = (7, 20, 33, 16, 40, 0)
VAL_SIZES = (4, 5, 0, 1, 2, 3)


def device_data(n: int, n_val: int, generator: torch.Generator, image=(1, 8, 8)) -> DeviceData:
    return DeviceData(torch.randn(n, *image, generator=generator), torch.randint(0, 10, (n,), generator=generator),
                      torch.randn(n_val, *image, generator=generator), torch.randint(0, 10, (n_val,), generator=generator))


def tiny_datas(image=(1, 8, 8)) -> list[DeviceData]:
    generator = torch.Generator().manual_seed(0)
    return [device_data(n, n_val, generator, image) for n, n_val in zip(SIZES, VAL_SIZES)]  # no training data, no validation data


def trainer(backend: str, optimizer: str = "sgd", model: str = "mlp", device: str = "cpu", **training) -> Trainer:
    kwargs = {"mlp": {"in_features": 64, "num_classes": 10, "hidden": 16}, "small-cnn": {"num_classes": 10, "width": 4},
              "lenet5": {}}[model]
    net = build_model(model, torch.Generator().manual_seed(1), **kwargs)
    settings = {"lr": 0.05 if optimizer == "sgd" else 0.01, "momentum": 0.9, "batch_size": 8, "epochs": 2, **training}
    return Trainer(net, LocalTraining(optimizer=optimizer, backend=backend, device=device, **settings))


def ragged_jobs(trainer: Trainer, datas: list[DeviceData], seed: int, shared: torch.Generator) -> list[LocalJob]:
    """Jobs of every kind: own generators and one shared by three jobs (two with the same Adam
    key), max_steps that leave epochs unused, other epochs, proximal terms, a gradient offset,
    a job stopped before its first step, and one with no data."""
    size = trainer.num_parameters
    start = torch.randn(size, generator=torch.Generator().manual_seed(seed)) * 0.1
    own = [torch.Generator().manual_seed(100 * seed + k) for k in range(len(datas))]
    jobs = [
        LocalJob(start, datas[0], own[0], ("model", 0)),
        LocalJob(start, datas[1], own[1], ("model", 1), max_steps=3, anchor=0.5 * start, proximal=0.3),
        LocalJob(start, datas[2], own[2], ("model", 2), epochs=3, gradient_offset=torch.full((size,), 0.01)),
        LocalJob(start, datas[3], own[3], ("model", 3), max_steps=1, epochs=4),
        LocalJob(start, datas[4], own[4], ("model", 4), max_steps=7, anchor=start, proximal=1.0),
        LocalJob(start, datas[5], own[5], ("model", 5)),
        LocalJob(start, datas[1], own[1], ("model", 6), max_steps=0),
        LocalJob(start, datas[1], shared, ("stream", 1)),
        LocalJob(-start, datas[2], shared, ("stream", 1), epochs=1),  # the same key: starts from the state just left
        LocalJob(start, datas[4], shared, None, max_steps=2),
    ]
    return jobs


def train_twice(t: Trainer, train, datas) -> tuple[list[torch.Tensor], list]:
    """Two rounds (so Adam's states carry over); returns the vectors and the generators' next draws."""
    shared = torch.Generator().manual_seed(7)
    outs, draws = [], []
    for seed in (1, 2):
        jobs = ragged_jobs(t, datas, seed, shared)
        outs.append(train(jobs))
        draws.append([int(torch.randint(1 << 30, (1,), generator=job.generator)) for job in jobs])
    return outs, draws


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("model", ["mlp", "small-cnn"])
def test_ragged_jobs_as_the_loop(optimizer, model):
    datas = tiny_datas()
    loop = trainer("loop", optimizer, model)
    expected, expected_draws = train_twice(loop, Backend(loop).train, datas)
    batched = trainer("batched", optimizer, model)
    got, draws = train_twice(batched, batched.train_many, datas)
    for a, b in zip(expected, got):
        torch.testing.assert_close(b, a, rtol=RTOL, atol=ATOL)
        assert b.device.type == "cpu"
    assert draws == expected_draws  # every generator consumed exactly as by the loop
    assert loop.optimizer_states.keys() == batched.optimizer_states.keys()
    for key, state in loop.optimizer_states.items():
        other = batched.optimizer_states[key]
        assert other.step == state.step, key
        torch.testing.assert_close(other.exp_avg.cpu(), state.exp_avg, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(other.exp_avg_sq.cpu(), state.exp_avg_sq, rtol=RTOL, atol=ATOL)
    if optimizer == "adam":
        assert batched.optimizer_states[("stream", 1)].step == 2 * (2 * 3 + 5)  # 2 rounds of both jobs on that key
        assert ("model", 5) not in batched.optimizer_states and ("model", 6) not in batched.optimizer_states  # no step taken


def test_unused_epochs_are_drawn():
    """max_steps 1 of 4 epochs: four orders drawn, one step taken (as the loop)."""
    data = tiny_datas()[3]
    schedule = draw_schedules([LocalJob(torch.zeros(1), data, torch.Generator().manual_seed(0), max_steps=1, epochs=4)], 8, 1)[0]
    generator = torch.Generator().manual_seed(0)
    orders = [torch.randperm(16, generator=generator) for _ in range(4)]
    assert schedule.tolist() == [orders[0][:8].tolist()]
    schedule = draw_schedules([LocalJob(torch.zeros(1), tiny_datas()[0], torch.Generator().manual_seed(0))], 8, 1)[0]
    assert schedule.shape == (1, 8) and schedule[0, 7] == -1 and sorted(schedule[0, :7].tolist()) == list(range(7))


def test_chunks_give_the_same_vectors():
    datas = tiny_datas()
    whole = trainer("batched", "adam")
    chunked = trainer("batched", "adam")
    shared = [torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)]
    a = BatchedEngine(whole, max_jobs=100).train(ragged_jobs(whole, datas, 1, shared[0]))
    b = BatchedEngine(chunked, max_jobs=2).train(ragged_jobs(chunked, datas, 1, shared[1]))
    torch.testing.assert_close(b, a, rtol=RTOL, atol=ATOL)
    c = BatchedEngine(trainer("batched", "adam"), memory_bytes=1).train(ragged_jobs(chunked, datas, 1, torch.Generator().manual_seed(7)))
    torch.testing.assert_close(c, a, rtol=RTOL, atol=ATOL)  # the memory bound: one job per chunk


def test_stacked_data_stay_on_the_device_across_rounds():
    datas = tiny_datas()
    t = trainer("batched")
    jobs = lambda: [LocalJob(torch.zeros(t.num_parameters), d, torch.Generator().manual_seed(k)) for k, d in enumerate(datas[:4])]
    t.train_many(jobs())
    engine = t.backend.engine
    pools = dict(engine._pools)
    t.train_many(jobs())
    assert engine._pools.keys() == pools.keys() and all(engine._pools[k] is pools[k] for k in pools)  # not rebuilt
    t.train_many(jobs()[:2])  # other devices: other pools; the copies of dropped data go with them
    assert all(engine._pools[k] is not pools.get(k) for k in engine._pools)
    extra = device_data(5, 2, torch.Generator().manual_seed(3))
    t.train_many([LocalJob(torch.zeros(t.num_parameters), extra, torch.Generator())])
    assert id(extra) in engine._copies
    key = id(extra)
    del extra
    t.train_many(jobs())  # the last call's pools let go of it
    gc.collect()
    assert key not in engine._copies


@pytest.mark.parametrize("model", ["mlp", "small-cnn"])
def test_evaluation_and_gradients_as_the_loop(model):
    datas = tiny_datas()
    loop, batched = trainer("loop", model=model), trainer("batched", model=model)
    generator = torch.Generator().manual_seed(4)
    models = torch.randn(2 * len(datas), loop.num_parameters, generator=generator) * 0.3
    pairs = datas + datas[::-1]  # each data twice, with other models
    accuracy, loss = Backend(loop).evaluate(models, pairs)
    got_accuracy, got_loss = batched.evaluate_many(models, pairs)
    assert np.isnan(got_loss[2]) and np.isnan(got_accuracy[len(datas) + 3])  # no validation points
    np.testing.assert_allclose(got_loss, loss, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(got_accuracy, accuracy)
    batched.eval_batch = 3  # several evaluation chunks per device
    np.testing.assert_allclose(batched.evaluate_many(models, pairs)[1], loss, rtol=RTOL, atol=ATOL)
    grads_of = datas + [datas[4], datas[2]]  # datas[-1]: no points, a zero gradient
    batches = [None] * len(datas) + [torch.tensor([3, 0, 3, 39]), torch.arange(20)]  # repeats allowed
    expected = Backend(loop).gradients(models[: len(grads_of)], grads_of, batches)
    got = batched.mean_gradients(models[: len(grads_of)], grads_of, batches)
    torch.testing.assert_close(got, expected, rtol=RTOL, atol=ATOL)
    batched.eval_batch = 7  # several chunks of samples: the chunk sums add up to the mean's gradient
    torch.testing.assert_close(batched.mean_gradients(models[: len(grads_of)], grads_of, batches), expected, rtol=RTOL, atol=ATOL)


def test_regression_and_adam_state_by_hand_through_the_engine():
    """The scalar-mean model (one parameter, squared error) with Adam across two rounds of
    FedAvg: the batched backend gives the loop's numbers."""
    data = scalar_data([[1.0, 3.0], [5.0, 5.0, 5.0, 5.0], [0.0, 2.0, 4.0]])
    results = []
    for backend in ("loop", "batched"):
        learner = build("fedavg", data, {"optimizer": "adam", "lr": 0.1, "batch_size": 2, "backend": backend})
        for server_round in (1, 2):
            run_round(learner, server_round)
        results.append((learner.theta.clone(), learner.trainer.optimizer_states[("model", 2)], learner.evaluate(2).loss))
    (theta, state, loss), (theta_b, state_b, loss_b) = results
    torch.testing.assert_close(theta_b, theta)
    assert state_b.step == state.step == 4
    torch.testing.assert_close(state_b.exp_avg_sq, state.exp_avg_sq)
    np.testing.assert_allclose(loss_b, loss, rtol=1e-6)


def test_lenet5_as_the_loop():
    datas = [device_data(n, 3, torch.Generator().manual_seed(n), (1, 28, 28)) for n in (5, 11)]
    vectors = []
    for backend in ("loop", "batched"):
        t = trainer(backend, model="lenet5", batch_size=4, epochs=1)
        start = torch.randn(t.num_parameters, generator=torch.Generator().manual_seed(0)) * 0.05
        vectors.append(t.train_many([LocalJob(start, d, torch.Generator().manual_seed(k)) for k, d in enumerate(datas)]))
    torch.testing.assert_close(vectors[1], vectors[0], rtol=RTOL, atol=ATOL)


def test_run_with_the_batched_backend(tmp_path, capsys):
    """``--backend batched`` reaches the engine and is recorded; the accuracies are the loop's."""
    accuracies = []
    for backend in ("loop", "batched"):
        args = ["run", "--algorithm", "user-centric", "--rounds", "2", "--out", str(tmp_path / backend), "--no-figure",
                "--json", "--backend", backend, "--device", "cpu"]
        assert main(args) == 0
        run_dir = json.loads(capsys.readouterr().out)["runs"][0]["result_dir"]
        assert json.loads(open(f"{run_dir}/config.json").read())["training"]["backend"] == backend
        lines = open(f"{run_dir}/rounds.csv").read().splitlines()
        header = lines[0].split(",")
        column = header.index("mean_accuracy")
        accuracies.append([float(line.split(",")[column]) for line in lines[1:]])
    np.testing.assert_allclose(accuracies[1], accuracies[0], atol=1e-9)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the batched engine's GPU path)")
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("model", ["mlp", "small-cnn"])
def test_ragged_jobs_on_cuda_as_the_loop_on_cpu(optimizer, model, monkeypatch):
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)  # full float32, as the CPU
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)
    datas = tiny_datas()
    loop = trainer("loop", optimizer, model)
    expected, expected_draws = train_twice(loop, Backend(loop).train, datas)
    cuda = trainer("batched", optimizer, model, device="cuda")
    got, draws = train_twice(cuda, cuda.train_many, datas)
    for a, b in zip(expected, got):
        assert b.device.type == "cpu"
        torch.testing.assert_close(b, a, rtol=RTOL, atol=ATOL)
    assert draws == expected_draws
    for key, state in loop.optimizer_states.items():
        assert cuda.optimizer_states[key].exp_avg.device.type == "cuda"
        torch.testing.assert_close(cuda.optimizer_states[key].exp_avg.cpu(), state.exp_avg, rtol=RTOL, atol=ATOL)
    models = torch.randn(len(datas), loop.num_parameters, generator=torch.Generator().manual_seed(4)) * 0.3
    np.testing.assert_allclose(cuda.evaluate_many(models, datas)[1], Backend(loop).evaluate(models, datas)[1], rtol=RTOL, atol=ATOL)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's own, raised while compiling
def test_compiled_backend_gives_the_loops_numbers():
    """Backend ``compiled``: the batched step under torch.compile, whole chunks every step."""
    problem = CompiledBackend.unavailable("cpu")
    if problem is not None:
        pytest.skip(problem)
    datas = tiny_datas()
    loop = trainer("loop", "adam", "mlp")
    expected, expected_draws = train_twice(loop, Backend(loop).train, datas)
    compiled = trainer("compiled", "adam", "mlp")
    got, draws = train_twice(compiled, compiled.train_many, datas)
    for a, b in zip(expected, got):
        torch.testing.assert_close(b, a, rtol=RTOL, atol=ATOL)
    assert draws == expected_draws
    for key, state in loop.optimizer_states.items():
        torch.testing.assert_close(compiled.optimizer_states[key].exp_avg, state.exp_avg, rtol=RTOL, atol=ATOL)


def test_compiled_backend_says_why_it_cannot_build_here_before_anything_trains(capsys, tmp_path, monkeypatch):
    """torch's C++ build of the CPU kernels breaks at a space in its cache folder's path, and
    needs a compiler: either is one line and exit status 2 before anything is made
    (``Backend.unavailable``), never a failed build mid-run."""
    out = tmp_path / "out"
    argv = ["run", "--algorithm", "fedavg", "--rounds", "1", "--backend", "compiled", "--device", "cpu", "--out", str(out)]
    monkeypatch.setenv("CXX", sys.executable)  # a program that exists: the path is what is wrong
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "with space"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "breaks at the space in its cache folder" in err and "TORCHINDUCTOR_CACHE_DIR" in err and err.count("\n") == 1
    monkeypatch.setenv("CXX", "no-such-compiler")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "there is no 'no-such-compiler' here (set CXX to one)" in err and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the batched engine's GPU path)")
def test_batched_runs_on_cuda_are_deterministic():
    """Same seed, same numbers on one GPU (cuDNN's deterministic kernels)."""
    datas = tiny_datas()
    runs = []
    for _ in range(2):
        t = trainer("batched", "adam", "small-cnn", device="cuda")
        runs.append(train_twice(t, t.train_many, datas))
    assert runs[0][1] == runs[1][1]
    for a, b in zip(runs[0][0], runs[1][0]):
        assert torch.equal(a, b)


def test_batched_runs_are_deterministic():
    """Same jobs, same generators' seeds: bit for bit the same vectors (and Adam states)."""
    datas = tiny_datas()
    runs = []
    for _ in range(2):
        t = trainer("batched", "adam")
        vectors, draws = train_twice(t, t.train_many, datas)
        runs.append((vectors, t.optimizer_states[("stream", 1)].exp_avg))
    assert all(torch.equal(a, b) for a, b in zip(runs[0][0], runs[1][0])) and torch.equal(runs[0][1], runs[1][1])
