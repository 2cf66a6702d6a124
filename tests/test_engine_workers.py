"""The ``processes`` backend: the reference loop (and evaluation) in worker processes, bit for bit.

Every comparison here is exact (``torch.equal``): a worker runs ``Trainer.train`` at one torch
thread on the same inputs as the in-process loop, so nothing may differ, not even in the last
bit, whatever the split of the jobs over the workers.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from learning.algorithms import ALGORITHMS, LearnerSetup
from learning.data import DeviceData, FederatedData
from learning import worker_start
from learning.engine import workers
from learning.engine.workers import balance, chains, job_work
from learning.training import LocalJob, LocalTraining
from scenarios.cli.main import main
from tiny_learners import tell_outcome

pytestmark = pytest.mark.skipif(not workers.SUPPORTED, reason="worker processes need Linux (fork, memfd)")

SIZES = (5, 17, 40, 64, 70, 33)  # unequal local sets: one partial batch, several batches, a lone short batch


def image_data(sizes=SIZES) -> FederatedData:
    """Random 8x8 images with two classes per device, sizes as given (validation: 8 each)."""
    generator = torch.Generator().manual_seed(7)
    devices = []
    for size in sizes:
        x = torch.randn(size + 8, 1, 8, 8, generator=generator)
        y = torch.randint(0, 4, (size + 8,), generator=generator)
        devices.append(DeviceData(x[:size], y[:size], x[size:], y[size:]))
    return FederatedData(tuple(devices), num_classes=4, groups=np.array([0, 0, 0, 1, 1, 1]))


def learner(name: str, backend: str, optimizer: str, participation: float = 1.0, data: FederatedData | None = None, **options):
    training = LocalTraining(lr=0.05, momentum=0.9, batch_size=16, epochs=1, optimizer=optimizer, backend=backend)
    setup = LearnerSetup(data or image_data(), "small-cnn", {"in_channels": 1, "num_classes": 4}, training,
                         np.random.SeedSequence(3), participation, options)
    return ALGORITHMS[name](setup)


def play(learner, rounds: int) -> None:
    """Rounds of the protocol without the network; in round 2 only every other participant arrives."""
    for server_round in range(rounds + 1):
        plan = learner.plan_round(server_round)
        if plan is None:
            continue
        arrived = plan.participants[::2] if server_round == 2 else plan.participants
        tell_outcome(learner, server_round, plan, arrived)
        learner.local_update(server_round, arrived)
        learner.aggregate(server_round, arrived)


def state(learner) -> dict:
    """Everything training leaves behind: models, generators, optimizer states."""
    out = {"theta": learner.theta.clone()}
    for name in ("personal", "controls", "theta_half", "stream_models"):
        if hasattr(learner, name):
            out[name] = getattr(learner, name).clone()
    out["generators"] = [g.get_state() for g in learner.generators]
    for key, adam in learner.trainer.optimizer_states.items():
        out[("adam", key)] = (adam.exp_avg, adam.exp_avg_sq, adam.step)
    return out


def assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        left, right = a[key], b[key]
        if isinstance(left, torch.Tensor):
            assert torch.equal(left, right), key
        elif key == "generators":
            assert all(torch.equal(x, y) for x, y in zip(left, right))
        else:
            assert torch.equal(left[0], right[0]) and torch.equal(left[1], right[1]) and left[2] == right[2], key


def trained(name, backend, optimizer, count=1, rounds=3, participation=1.0, data=None, **options) -> dict:
    workers.set_workers(count)
    try:
        subject = learner(name, backend, optimizer, participation, data, **options)
        play(subject, rounds)
        evaluation = subject.evaluate(rounds)  # through the workers too, when there are any
        return {**state(subject), "accuracy": torch.from_numpy(evaluation.accuracy), "loss": torch.from_numpy(evaluation.loss)}
    finally:
        workers.close_pools()
        workers.set_workers(1)


CASES = [
    ("fedavg", {}),
    ("fedprox", {"mu": 0.5}),  # proximal term
    ("scaffold", {"local_epochs": 2}),  # gradient offset, several epochs
    ("ditto", {"lam": 0.3}),  # a second model per device, anchored to the first
    ("self-fl", {"max_local_steps": 7}),  # step limits that end inside an epoch
    ("fedproto", {"lam": 0.5}),  # the prototype term travels with the job
    ("parallel-user-centric", {}),  # one device trains several models: one generator, several jobs
    ("pfedlia", {"warmup_rounds": 1, "influence_epochs": 2, "influence_batch_size": 9}),  # data not the learner's
]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("name, options", CASES, ids=[c[0] for c in CASES])
def test_processes_give_the_loops_numbers_bit_for_bit(name, options, optimizer):
    reference = trained(name, "loop", optimizer, **options)
    assert_same(reference, trained(name, "processes", optimizer, count=2, **options))


def test_the_split_over_workers_and_partial_participation_change_nothing():
    reference = trained("fedavg", "loop", "adam", participation=0.5)
    for count in (2, 3, 5):
        assert_same(reference, trained("fedavg", "processes", "adam", count=count, participation=0.5))
    assert_same(trained("ditto", "processes", "sgd", count=3), trained("ditto", "processes", "sgd", count=3))


GRADIENT_CASES = [
    ("pfedme", {"R": 3, "K": 2}),  # its inner steps: a mini-batch of indices per row
    ("per-fedavg", {}),  # two batches per step, then whole local sets (no indices)
    ("user-centric", {"streams": 2}),  # the eq. 10 set-up: each device's whole set, then its disjoint mini-batches
]


@pytest.mark.parametrize("name, options", GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES])
def test_mean_gradients_in_the_workers_are_the_loops_bit_for_bit(name, options):
    reference = trained(name, "loop", "sgd", **options)
    for count in (2, 3):
        assert_same(reference, trained(name, "processes", "sgd", count=count, **options))


def test_a_gradient_row_whose_data_the_workers_do_not_hold_is_taken_here():
    subject = learner("fedavg", "processes", "sgd")
    devices = subject.data.devices
    stranger = DeviceData(devices[0].x_train.clone(), devices[0].y_train.clone(), devices[0].x_val, devices[0].y_val)
    datas = [devices[1], stranger, devices[2], devices[3]]
    batches = [torch.tensor([4, 0, 9]), None, None, np.array([1, 2])]
    params = subject.theta0.repeat(4, 1) + torch.linspace(0, 1, 4)[:, None]
    reference = subject.trainer.mean_gradients(params, datas, batches)  # one worker: the loop, here
    workers.set_workers(2)
    try:
        assert torch.equal(subject.trainer.mean_gradients(params, datas, batches), reference)
        assert subject.trainer.backend.pool is not None
    finally:
        workers.close_pools()
        workers.set_workers(1)


def test_rows_of_one_expanded_vector_travel_as_one(monkeypatch):
    """The eq. 10 set-up asks for every device's gradients at ``theta^0`` (an expanded tensor):
    each worker's arena holds that vector once, then a gradient per row."""
    subject = learner("fedavg", "processes", "sgd")
    datas = list(subject.data.devices) * 2
    params = subject.theta0.expand(len(datas), -1)
    reference = subject.trainer.mean_gradients(params, datas)
    asked = []
    fit = workers.WorkerPool._fit
    monkeypatch.setattr(workers.WorkerPool, "_fit", lambda pool, worker, nbytes: asked.append(nbytes) or fit(pool, worker, nbytes))
    workers.set_workers(2)
    try:
        assert torch.equal(subject.trainer.mean_gradients(params, datas), reference)
    finally:
        workers.close_pools()
        workers.set_workers(1)
    vector = params.shape[1] * params.element_size()
    assert sorted(asked) == [(1 + 6) * vector, (1 + 6) * vector]  # 12 rows, 6 a worker


def test_validation_images_the_devices_share_are_shared_in_the_workers_too():
    """Concept shift: every device validates on one tensor under its own labels. The workers'
    arena holds that tensor once (every device's validation inputs at one offset), and their
    evaluations, one forward pass per model, are the loop's, bit for bit."""
    base = image_data()
    shared = base.devices[0].x_val
    generator = torch.Generator().manual_seed(8)
    devices = tuple(DeviceData(d.x_train, d.y_train, shared, torch.randint(0, 4, (shared.shape[0],), generator=generator))
                    for d in base.devices)
    _, layout = workers._pack(devices)
    assert len({device[2][0] for device in layout}) == 1 and len({device[0][0] for device in layout}) == len(devices)
    data = FederatedData(devices, num_classes=4, groups=base.groups)
    loop = trained("fedavg", "loop", "sgd", data=data)
    assert_same(loop, trained("fedavg", "processes", "sgd", count=2, data=data))
    assert len(set(loop["loss"].tolist())) > 1  # one model, one input tensor, the devices' own labels


def job(generator, key=None, size=10, epochs=None, max_steps=None):
    data = DeviceData(torch.zeros(size, 1), torch.zeros(size), torch.zeros(0, 1), torch.zeros(0))
    return LocalJob(torch.zeros(1), data, generator, key, epochs=epochs, max_steps=max_steps)


def test_chains_keep_jobs_that_share_a_generator_or_a_state_in_one_worker():
    g = [torch.Generator() for _ in range(4)]
    jobs = [job(g[0], "a"), job(g[1], "b"), job(g[0], "c"), job(g[2], "b"), job(g[3], None), job(g[3], "d")]
    assert sorted(chains(jobs)) == [[0, 2], [1, 3], [4, 5]]


def test_balance_puts_the_largest_chain_first_on_the_least_loaded_worker():
    config = LocalTraining(batch_size=4, epochs=2)
    jobs = [job(torch.Generator(), size=s, max_steps=m) for s, m in [(10, None), (30, None), (20, None), (8, 1), (15, None)]]
    work = [job_work(j, config) for j in jobs]
    assert work == [20, 60, 40, 4, 30]  # samples x epochs; the step limit caps the fourth at 1 batch
    # 60, 40, then 30 to the lighter (40), 20 to the lighter (60), 4 to the lighter (70): 80 against 74
    assert balance([[i] for i in range(5)], work, 2) == [[0, 1], [2, 3, 4]]


def test_a_failing_job_is_reported_with_the_workers_traceback():
    subject = learner("fedavg", "processes", "sgd")
    bad = DeviceData(torch.zeros(3, 2, 8, 8), torch.zeros(3, dtype=torch.long), torch.zeros(0), torch.zeros(0))
    workers.set_workers(2)
    try:
        with pytest.raises(RuntimeError, match="training worker .* failed"):
            subject.trainer.train_many([LocalJob(subject.theta[0], bad, torch.Generator())])
        assert subject.trainer.train_many([subject.job(0, subject.theta[0])]).shape == subject.theta[:1].shape  # still serves
    finally:
        workers.close_pools()
        workers.set_workers(1)


def test_release_stops_and_reaps_the_workers():
    subject = learner("fedavg", "processes", "sgd")
    workers.set_workers(2)
    try:
        play(subject, 1)
        pids = subject.trainer.backend.pool.pids
        assert all(_alive(pid) for pid in pids)
        subject.trainer.close()
        assert not any(_alive(pid) for pid in pids)
        play(subject, 1)  # a later round forks a fresh pool
        assert subject.trainer.backend.pool.pids != pids
    finally:
        workers.close_pools()
        workers.set_workers(1)


def test_a_round_whose_worker_was_killed_is_trained_again_by_a_fresh_pool():
    everyone = range(len(SIZES))
    reference = learner("fedavg", "loop", "adam")
    for server_round in (1, 2):
        reference.local_update(server_round, everyone)
        reference.aggregate(server_round, everyone)
    subject = learner("fedavg", "processes", "adam")
    workers.set_workers(2)
    try:
        for server_round in (1, 2):
            subject.local_update(server_round, everyone)
            subject.aggregate(server_round, everyone)
            if server_round == 1:  # round 2 meets a dead worker; nothing of its first try is written back
                first = subject.trainer.backend.pool.pids
                os.kill(first[1], signal.SIGKILL)
        assert not set(subject.trainer.backend.pool.pids) & set(first)
    finally:
        workers.close_pools()
        workers.set_workers(1)
    assert_same(state(reference), state(subject))


ORPHAN_SCRIPT = textwrap.dedent("""
    import sys
    sys.path[:0] = [{root!r}, {tests!r}]
    from learning.engine import workers
    from test_engine_workers import learner, play
    workers.set_workers(2)
    subject = learner("fedavg", "processes", "sgd")
    play(subject, 1)
    print(*subject.trainer.backend.pool.pids, flush=True)
    {ending}
""")


@pytest.mark.parametrize("ending, kill", [("sys.stdin.read()", True), ("sys.stdin.readline()", False)], ids=["sigkill", "exit"])
def test_no_worker_outlives_its_parent(ending, kill):
    """Killed with SIGKILL (no clean-up can run) or exiting normally without a release, the
    parent leaves no worker behind."""
    root = str(Path(__file__).resolve().parents[1])
    script = ORPHAN_SCRIPT.format(root=root, tests=str(Path(__file__).parent), ending=ending)
    parent = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(pid) for pid in pids)
        if kill:
            parent.send_signal(signal.SIGKILL)
        else:  # let it end on its own
            parent.stdin.write("\n")
            parent.stdin.flush()
        parent.wait(timeout=30)
        deadline = time.monotonic() + 10  # bounded wait for the kernel to deliver PR_SET_PDEATHSIG
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in pids)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def _alive(pid: int) -> bool:
    """Running (a zombie, dead but not yet reaped by whoever inherited it, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _count_in_child(queue) -> None:
    workers.set_workers(None)
    queue.put(workers.worker_count())


def test_a_process_of_a_parallel_sweep_trains_in_itself_by_default():
    context = worker_start.context()  # as the run pool starts its workers
    queue = context.Queue()
    child = context.Process(target=_count_in_child, args=(queue,))
    child.start()
    assert queue.get(timeout=60) == 1
    child.join()
    workers.set_workers(None)
    try:
        assert workers.worker_count() == workers.usable_cores()
    finally:
        workers.set_workers(1)


def test_workers_option_on_the_command_line(tmp_path, capsys):
    assert main(["--workers", "0", "run", "--rounds", "1", "--out", str(tmp_path)]) == 2
    assert "--workers must be an integer in 1..1024, got 0" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_a_run_with_workers_is_the_run_in_one_process(tmp_path, capsys):
    args = ["run", "--algorithm", "fedavg", "ditto", "--rounds", "2", "--no-figure", "--json", "--backend", "processes"]
    try:
        assert main(["--workers", "1", *args, "--out", str(tmp_path / "one")]) == 0
        alone = json.loads(capsys.readouterr().out)["runs"]
        assert main(["--workers", "2", *args, "--out", str(tmp_path / "two")]) == 0
        pooled = json.loads(capsys.readouterr().out)["runs"]
    finally:
        workers.set_workers(1)
    for one, two in zip(alone, pooled):
        assert (tmp_path / "one" / Path(one["result_dir"]).name / "rounds.csv").read_text() == \
            (tmp_path / "two" / Path(two["result_dir"]).name / "rounds.csv").read_text()
    assert not workers._open_pools  # the runner closed them
