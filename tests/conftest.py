import torch

torch.set_num_threads(1)  # many tiny local updates: one thread is fastest and deterministic

from learning.engine.workers import set_workers  # noqa: E402

set_workers(1)  # the processes backend trains in the test process; tests/test_engine_workers.py starts workers itself


import sys  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture
def plugin_registries():
    """A test that loads plugins leaves every registry they add to, and the plugins' own records,
    as it found them: later tests in the same worker see only the built-ins."""
    from learning.algorithms import ALGORITHMS
    from learning.codecs import CODECS
    from learning.models import MODELS
    from netsim.scheduling import POLICIES
    from scenarios import plugins
    from scenarios.definitions.orchestrators import ORCHESTRATORS
    from scenarios.definitions.registry import SCENARIOS
    from scenarios.definitions.systems import SYSTEMS

    tables = (ALGORITHMS, SCENARIOS, MODELS, SYSTEMS, POLICIES, CODECS, plugins.ORIGINS, plugins.LOADED, plugins.FILES, ORCHESTRATORS)
    saved = [(table, dict(table)) for table in tables]
    installed = plugins._installed_loaded
    yield
    for source, module in plugins.LOADED.items():
        if source not in saved[7][1]:
            sys.modules.pop(module.__name__, None)
    for table, content in saved:
        table.clear()
        table.update(content)
    plugins._installed_loaded = installed


# The files that take longest, longest first: every file of at least 4 s, by its CPU seconds on
# one worker of the whole suite (`python3 -m benchmarks.suite_timeline` prints the list by wall
# time; on a shared machine the CPU seconds are the steadier order). pytest-xdist's loadfile
# hands each file whole to the next free worker in collection order, so the long ones go first
# and the short ones fill in around them: started last, a long file is one worker's long pole
# while the other sits idle (test_scenarios_real.py, 18 s, kept the other worker idle for 10 s at
# the end). test_reproduce.py's smoke scale runs in the worker's own process (--jobs 1): it and
# test_composition.py's matrix (167 and 183 CPU s file by file, docs/benchmarks.md) are the
# longest files by far and start first, one on each worker.
LONG_FILES = ("test_reproduce.py", "test_composition.py", "test_algorithm_self_fl.py", "test_sweep.py", "test_hostile_input.py",
              "test_conformance.py", "test_scenarios_real.py", "test_concept_shift_ordering.py", "test_plugins.py",
              "test_trust.py", "test_lambda_study.py", "test_bad_input.py", "test_engine_workers.py",
              "test_worker_start.py", "test_buffered_dynamics.py", "test_engine_batched.py", "test_layers.py",
              "test_multicell.py", "test_datasets_real.py", "test_docs.py", "test_cell_command.py", "test_round_time.py",
              "test_dynamics_motion.py", "test_algorithm_pfedlia.py", "test_plot.py")


def pytest_collection_modifyitems(items):
    rank = {name: place for place, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FILES)))  # stable: each file's own order kept
