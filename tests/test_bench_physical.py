"""benchmarks.bench_physical runs on the presets' defaults (nr-harq, which needs a run's link and
stream state: the cell bound as a run binds it) and prints one row per downlink kind; the timings
themselves are not asserted (wall clock)."""

from benchmarks import bench_physical


def test_it_runs_on_the_presets_defaults(capsys):
    bench_physical.main(["--devices", "12", "--rounds", "1"])
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith("| devices | downlink |") and [r.split(" | ")[1] for r in rows[2:]] == ["broadcast", "unicasts"]
    assert all(r.count(" ms ") == 4 and r.endswith(" ms |") for r in rows[2:])
