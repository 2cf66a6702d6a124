"""Workers start from the fork server, never as forks of the process that asks: they inherit
none of its state (so none of its CUDA or autograd threads), load its plugins, die with it,
and Ctrl-C cancels what is queued."""

from __future__ import annotations

import json
import multiprocessing
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest
import torch

from child_env import checkout_environment
from learning import worker_start
from learning.worker_start import alive
from learning.engine import workers
from scenarios.cli.main import main
from scenarios.execution.pool import run_calls

ROOT = Path(__file__).resolve().parents[1]
MARK = "fl_cosim_parent_only_marker"


def _what_a_worker_sees(parent_pid: int) -> dict:
    return {"marked": MARK in sys.modules, "method": multiprocessing.get_start_method(allow_none=True),
            "parent_is_requester": os.getppid() == parent_pid, "threads": torch.get_num_threads()}


@pytest.fixture
def marked_parent():
    sys.modules[MARK] = types.ModuleType(MARK)  # state only this process has
    yield
    del sys.modules[MARK]


def test_run_pool_workers_are_not_forks_of_the_parent(marked_parent):
    import functools

    seen = run_calls([functools.partial(_what_a_worker_sees, os.getpid())] * 2, jobs=2)
    assert seen == [{"marked": False, "method": "forkserver", "parent_is_requester": False, "threads": 1}] * 2


def test_training_workers_are_not_forks_and_give_the_loops_numbers(marked_parent):
    from test_engine_workers import assert_same, learner, play, state

    reference = learner("fedavg", "loop", "sgd")
    subject = learner("fedavg", "processes", "sgd")
    play(reference, 2)
    workers.set_workers(2)
    try:
        play(subject, 2)
        pids = subject.trainer.backend.pool.pids
        assert all(_parent_of(pid) != os.getpid() for pid in pids)  # the fork server's children
    finally:
        workers.close_pools()
        workers.set_workers(1)
    assert_same(state(reference), state(subject))


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


SET_UP: list[str] = []  # what a worker's setup calls did, in that worker


def _set_up(word: str) -> None:
    SET_UP.append(word)


def _what_was_set_up(_: int) -> list[str]:
    return list(SET_UP)


def test_setup_calls_run_in_each_worker_before_its_work():
    """A maker asked as each worker starts: its call runs there first; a maker with nothing to do
    (None) adds nothing; this process runs neither."""
    import functools

    worker_start.add_setup("test", lambda: functools.partial(_set_up, "plugins"))
    worker_start.add_setup("test-none", lambda: None)
    try:
        assert run_calls([functools.partial(_what_was_set_up, k) for k in range(2)], jobs=2) == [["plugins"]] * 2
    finally:
        del worker_start._setup_makers["test"], worker_start._setup_makers["test-none"]
    assert SET_UP == []


def test_compare_on_two_workers_gives_the_serial_tables(tmp_path, capsys, marked_parent):
    argv = ["compare", "--algorithm", "fedavg", "local", "--seeds", "2", "--rounds", "2", "--json"]
    assert main([*argv, "--out", str(tmp_path / "pooled"), "--jobs", "2"]) == 0
    pooled = json.loads(capsys.readouterr().out)
    assert main([*argv, "--out", str(tmp_path / "serial"), "--jobs", "1"]) == 0
    serial = json.loads(capsys.readouterr().out)
    assert pooled["rows"] == serial["rows"]


HELD_PLUGIN = """
import os
import threading

from learning.algorithms.fedavg import FedAvg


class HeldFedAvg(FedAvg):
    \"\"\"FedAvg whose first local update says so (its worker's pid, a line on the test's FIFO) and
    then waits for ever: the run stays in flight until the command is interrupted.\"\"\"

    name = "held-fedavg"

    def local_update(self, server_round, devices):
        with open(os.environ["FL_COSIM_TEST_STARTED"], "w") as fifo:
            fifo.write(f"{os.getpid()}\\n")
        threading.Event().wait()


ALGORITHMS = [HeldFedAvg]
"""


def _lines(fd: int, count: int, deadline: float) -> list[str]:
    """``count`` lines read from ``fd``, waiting for them (in ``select``) until ``deadline``."""
    text = b""
    while text.count(b"\n") < count:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        text += os.read(fd, 4096)
    return text.decode().splitlines()


def _wait_ended(pids: list[int], deadline: float) -> list[int]:
    """The processes of ``pids`` still running at ``deadline`` (each waited for on its pidfd)."""
    left = []
    for pid in pids:
        try:
            handle = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            select.select([handle], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(handle)
        if alive(pid):
            left.append(pid)
    return left


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_cancels_the_queued_runs(tmp_path, inherited):
    """SIGINT while 2 of 8 runs are in flight (a test plugin holds each one in its first local
    update and says so on a FIFO, so the signal lands at a known point, with no timing): the
    command exits 130, no run finishes, the 6 queued never start and no worker is left; the same
    when the command was started with SIGINT ignored (a background job of a script)."""
    (tmp_path / "held.py").write_text(HELD_PLUGIN)
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # read and write: never EOF, and writers never wait
    out = tmp_path / "out"
    command = [sys.executable, "-m", "scenarios.cli.main", "compare", "--plugin", str(tmp_path / "held.py"), "--algorithm",
               "held-fedavg", "--seeds", "8", "--rounds", "2", "--out", str(out), "--jobs", "2"]
    env = checkout_environment(FL_COSIM_TEST_STARTED=str(fifo))
    before = signal.signal(signal.SIGINT, signal.SIG_IGN if inherited == "ignored" else signal.default_int_handler)
    try:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, before)
    try:
        deadline = time.monotonic() + 300  # a bound on process management, never a timing assumption
        started = _lines(reader, 2, deadline)
        assert len(started) == 2, (started, process.poll())
        children = _descendants(process.pid)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=120) == 130
        assert "fl-cosim: interrupted" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert _lines(reader, 1, time.monotonic()) == []  # the queued runs never started
    os.close(reader)
    assert not list(out.glob("*/summary.json"))
    assert _wait_ended(children, time.monotonic() + 60) == []


def _descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if _parent_of(int(entry.name)) == parent:
                        found.append(int(entry.name))
                        frontier.append(int(entry.name))
                except (OSError, ValueError, IndexError):
                    continue
    return found


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device: pooled commands after this process used it")
def test_pooled_commands_work_after_cuda_and_autograd_ran_here(tmp_path, capsys):
    weights = torch.ones(3, device="cuda", requires_grad=True)
    (weights * 2).sum().backward()  # CUDA and autograd's device threads now live in this process
    argv = ["compare", "--algorithm", "fedavg", "local", "--seeds", "2", "--rounds", "2", "--json",
            "--out", str(tmp_path), "--jobs", "2"]
    assert main(argv) == 0
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 2
    workers.set_workers(2)
    try:
        from test_engine_workers import learner, play

        subject = learner("fedavg", "processes", "sgd")
        play(subject, 1)  # CPU training workers beside a process that ran CUDA autograd
    finally:
        workers.close_pools()
        workers.set_workers(1)


def test_a_script_without_a_main_guard_runs_once(tmp_path):
    """Workers never import the requester's main script again: a plain top-level script that
    trains on two workers and runs two calls on the run pool prints its line once."""
    script = tmp_path / "plain.py"
    script.write_text(textwrap.dedent(f"""
        import functools, os, sys
        sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / "tests")!r}]
        from learning.engine import workers
        from scenarios.execution.pool import run_calls
        from test_engine_workers import learner, play
        workers.set_workers(2)
        subject = learner("fedavg", "processes", "sgd")
        play(subject, 1)
        workers.close_pools()
        print("ran", len(run_calls([functools.partial(os.getpid)] * 2, jobs=2)), flush=True)
    """))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ran 2"]
