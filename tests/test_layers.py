"""The layering holds at run time, not only in the source: the learning layer loads no SimPy,
the network layer no PyTorch, and the learner-clock contract neither, nor NumPy (each checked
in a fresh interpreter)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("module, absent", [
    ("contract", "simpy"),
    ("contract", "torch"),
    ("contract", "numpy"),
    ("learning.algorithms", "simpy"),
    ("netsim", "torch"),
    ("netsim.engine", "torch"),
])
def test_importing_a_layer_leaves_the_other_unloaded(module, absent):
    code = f"import sys, {module}; print({absent!r} in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
