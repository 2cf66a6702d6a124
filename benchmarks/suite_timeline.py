"""Where the test suite's wall time goes: each file's time on its pytest-xdist worker.

``python3 -m benchmarks.suite_timeline [--min-s 4] [pytest arguments]`` runs the suite (the
README's ``python3 -m pytest``, with this module as a pytest plugin that notes when each test
starts and ends on which worker), then prints every file of at least ``--min-s`` seconds by its
wall time on its worker, how busy the machine's cores were meanwhile (``/proc/stat``), when
each worker finished its last test, and the files in the order
``tests/conftest.py``'s ``LONG_FILES`` should list them (longest first: xdist's ``loadfile``
hands files out in that order, so a long file started late is one worker's long pole while the
other idles).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = "FL_COSIM_SUITE_TIMELINE"  # the folder the plugin writes to (no plugin output without it)


# --- the pytest plugin (loaded with -p benchmarks.suite_timeline) ----------------------------
def _note(kind: str, nodeid: str) -> None:
    folder = os.environ.get(ENV)
    if folder:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(Path(folder) / f"{worker}.csv", "a") as out:
            out.write(f"{kind},{time.time():.3f},{nodeid}\n")


def pytest_runtest_logstart(nodeid, location) -> None:
    _note("start", nodeid)


def pytest_runtest_logfinish(nodeid, location) -> None:
    _note("end", nodeid)


# --- the command -----------------------------------------------------------------------------
def cpu_ticks() -> list[int] | None:
    """The machine's CPU time so far by kind (``/proc/stat``'s first line: user, nice, system,
    idle, iowait, irq, softirq, steal), all processes; None where there is no ``/proc``."""
    try:
        with open("/proc/stat") as stat:
            return [int(x) for x in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None


def busy_line(before: list[int] | None, after: list[int] | None, wall_s: float) -> str:
    """How busy the machine's cores were between two ``cpu_ticks`` (every process on it, the
    suite's children included: a share near 100% means the suite is bound by CPU, not waiting)."""
    if before is None or after is None:
        return "machine CPU: unknown (no /proc/stat)"
    spent = [b - a for a, b in zip(before, after)]
    total = sum(spent) or 1
    busy = total - spent[3] - spent[4]
    cores = os.cpu_count() or 1
    return (f"machine CPU: {busy / total:.1%} busy over {cores} cores, about {busy / total * cores * wall_s:.0f} CPU-s "
            f"(user {spent[0] / total:.1%}, system {spent[2] / total:.1%}, idle {spent[3] / total:.1%})")


def file_spans(folder: Path, began: float) -> dict[str, dict[str, tuple[float, float]]]:
    """worker -> file -> (first start, last end), seconds from ``began``."""
    spans: dict[str, dict[str, tuple[float, float]]] = defaultdict(dict)
    for path in sorted(folder.glob("gw*.csv")):
        for line in path.read_text().splitlines():
            _, stamp, nodeid = line.split(",", 2)
            name, t = Path(nodeid.split("::")[0]).name, float(stamp) - began
            first, last = spans[path.stem].get(name, (t, t))
            spans[path.stem][name] = (min(first, t), max(last, t))
    return spans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-s", type=float, default=4.0, help="list files of at least this many seconds")
    args, pytest_args = parser.parse_known_args()
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, ENV: folder, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        began, ticks = time.time(), cpu_ticks()
        code = subprocess.call([sys.executable, "-m", "pytest", "-p", "benchmarks.suite_timeline", *pytest_args], cwd=ROOT, env=env)
        total = time.time() - began
        busy = busy_line(ticks, cpu_ticks(), total)
        spans = file_spans(Path(folder), began)
    print(f"\nsuite: {total:.1f} s wall (exit status {code}); {busy}")
    rows = sorted(((end - start, name, worker, start, end) for worker, files in spans.items()
                   for name, (start, end) in files.items()), reverse=True)
    print("\n| file | worker | from s | to s | wall s |\n|---|---|---|---|---|")
    for wall, name, worker, start, end in rows:
        if wall >= args.min_s:
            print(f"| {name} | {worker} | {start:.1f} | {end:.1f} | {wall:.1f} |")
    for worker, files in sorted(spans.items()):
        print(f"{worker}: last test ended at {max(end for _, end in files.values()):.1f} s")
    print("\nLONG_FILES = (" + ", ".join(f'"{name}"' for wall, name, *_ in rows if wall >= args.min_s) + ")")


if __name__ == "__main__":
    main()
