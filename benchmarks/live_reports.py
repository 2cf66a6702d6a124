"""A pytest plugin (``-p live_reports``, with ``benchmarks/`` on ``PYTHONPATH``) that appends each
test's outcome and duration to ``$OUT/reports.txt``, and each failure's report to
``$OUT/failures.txt``, as the report reaches pytest-xdist's controller: a run cut short by a time
limit on a lent machine still says which tests failed, why, and how long each took
(``benchmarks/cuda_check.sh``)."""

import os

_controller = True


def pytest_configure(config):
    global _controller
    _controller = not hasattr(config, "workerinput")  # a worker's reports also reach the controller


def pytest_runtest_logreport(report):
    if not _controller:
        return
    out = os.environ.get("OUT", ".")
    if report.when == "call" or report.outcome != "passed":
        with open(os.path.join(out, "reports.txt"), "a") as f:
            f.write(f"{report.outcome} {report.duration:.2f} {report.when} {report.nodeid}\n")
    if report.failed:
        with open(os.path.join(out, "failures.txt"), "a") as f:
            f.write(f"==== {report.nodeid} ({report.when})\n{report.longreprtext[-2500:]}\n")
