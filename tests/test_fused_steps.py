"""The trainer's fused steps are ``torch.optim``'s, bit for bit, and import no ``torch._dynamo``."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from learning.fused_steps import FusedAdam, FusedSGD
from learning.jobs import ADAM_BETAS, ADAM_EPS


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(1, 3, 3), torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 5))


def _steps(make, steps: int = 6) -> list[torch.Tensor]:
    """Parameters after ``steps`` steps on fixed batches (the optimizer made fresh halfway, its
    state handed over, as the trainer does between rounds for Adam)."""
    model = _model()
    params = list(model.parameters())
    generator = torch.Generator().manual_seed(1)
    optimizer = make(params)
    for step in range(steps):
        if step == steps // 2:
            state = {p: dict(optimizer.state.get(p, {})) for p in params}
            optimizer = make(params)
            if "exp_avg" in state[params[0]]:
                optimizer.state.update(state)
        for p in params:
            p.grad = None
        x = torch.randn(7, 1, 6, 6, generator=generator)
        y = torch.randint(0, 5, (7,), generator=generator)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return [p.detach().clone() for p in params]


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_is_torch_optims_fused_sgd(momentum):
    ours = _steps(lambda ps: FusedSGD(ps, lr=0.05, momentum=momentum))
    theirs = _steps(lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=momentum, fused=True))
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs))


def test_adam_is_torch_optims_fused_adam_with_its_state_carried_over():
    ours = _steps(lambda ps: FusedAdam(ps, lr=0.01, betas=ADAM_BETAS, eps=ADAM_EPS))
    theirs = _steps(lambda ps: torch.optim.Adam(ps, lr=0.01, betas=ADAM_BETAS, eps=ADAM_EPS, fused=True))
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs))


def test_training_imports_no_dynamo():
    """A local update of SGD and of Adam leaves ``torch._dynamo`` unimported (torch.optim's step
    imports it: a second torch import's worth in every fresh process)."""
    code = ("import sys, torch\n"
            "from learning.fused_steps import FusedAdam, FusedSGD\n"
            "m = torch.nn.Linear(3, 2)\n"
            "for o in (FusedSGD(list(m.parameters()), 0.1, 0.9), FusedAdam(list(m.parameters()), 0.1, (0.9, 0.999), 1e-7)):\n"
            "    m(torch.ones(4, 3)).sum().backward(); o.step()\n"
            "print('torch._dynamo' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "False", done.stderr
