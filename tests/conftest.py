import torch

torch.set_num_threads(1)  # many tiny local updates: one thread is fastest and deterministic

from learning.engine.workers import set_workers  # noqa: E402

set_workers(1)  # the processes backend trains in the test process; tests/test_engine_workers.py starts workers itself
