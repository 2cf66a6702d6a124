"""Progress on stderr: rounds, wall time and ETA; off with --quiet and under --json."""

import io

from scenarios.cli.main import main
from scenarios.execution.progress import Progress


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_eta_is_elapsed_per_unit_times_what_is_left():
    clock, stream = FakeClock(), io.StringIO()
    bar = Progress("fedavg", 10, stream=stream, clock=clock)
    clock.now += 30.0
    bar.update(3)
    assert stream.getvalue() == "[fedavg] [#######-----------------] 3/10 rounds  wall 00:30  eta 01:10\n"
    clock.now += 3570.0
    bar.update(10, "done")
    assert stream.getvalue().splitlines()[-1].endswith("10/10 rounds  wall 1:00:00  eta 00:00  done")


def test_one_line_per_tenth_when_not_a_terminal():
    clock, stream = FakeClock(), io.StringIO()
    bar = Progress("x", 1000, stream=stream, clock=clock)
    for done in range(1001):
        bar.update(done)
    assert len(stream.getvalue().splitlines()) == 11


def test_run_shows_progress_unless_quiet_or_json(capsys, tmp_path):
    argv = ["run", "--algorithm", "fedavg", "--rounds", "2", "--out", str(tmp_path), "--no-figure"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "[fedavg (loop, cpu)]" in err  # the resolved training engine (2 rounds: the loop, also where there is CUDA)
    assert "2/2 rounds" in err and "wall" in err and "eta" in err
    for flag in ("--quiet", "--json"):
        assert main(argv + [flag, "--force"]) == 0
        assert capsys.readouterr().err == ""
