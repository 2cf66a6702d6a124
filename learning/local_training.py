"""The local training settings (``LocalTraining``): declared without torch, so a command's
``--help`` and its checks import no torch; ``learning.engine.resolve_training`` asks the machine
(CUDA, the backends) when a run is made.

``BACKEND_NAMES`` are ``learning.engine.BACKENDS``'s names (``tests/test_engine_backends.py``
checks them against the registry), ``CPU_BACKENDS`` those that train on the CPU only (the
settings refuse them on a GPU), ``INIT_SCHEMES`` ``learning.models.init_parameters``'s schemes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from learning.options import Options, option

OPTIMIZERS = ("sgd", "adam")
INIT_SCHEMES = ("keras", "torch")
BACKEND_NAMES = ("loop", "batched", "compiled", "processes")
CPU_BACKENDS = ("loop", "processes")  # the rest train on a GPU too


@dataclass(frozen=True)
class LocalTraining(Options):
    """Local training settings, each declared once with its range, flag and doc (``--help``,
    ``fl-cosim list`` and the checks read them). Defaults are the journal paper's text (V-A):
    SGD, lr 0.01, momentum 0.9, batch 64, E = 1, with the reference code's Keras initialization.

    ``optimizer``: ``sgd`` (the paper's text; momentum state starts afresh every local update)
    or ``adam`` (the authors' reference code: lr as given, betas 0.9/0.999, eps 1e-7, each
    device's moments and step count kept across rounds). ``init``: ``keras`` or ``torch``
    (``learning.models.init_parameters``). ``device``: where training runs: ``cpu``,
    ``cuda[:N]`` or ``auto`` (CUDA when PyTorch sees one). ``backend``: which engine runs
    ``train_many`` (a name of ``learning.engine.BACKENDS``): ``loop`` (the reference, in this process),
    ``processes`` (the reference loop in one worker process per core, the same numbers bit for
    bit), ``batched`` (every device at once with ``torch.func``: the GPU path) or ``auto``
    (``batched`` on a GPU, ``processes`` on the CPU; a run of little work then takes ``loop``:
    ``learning.engine.auto``). ``learning.engine.resolve_training`` replaces ``auto``; runs record
    the resolved settings.
    """

    lr: float = option(0.01, "local learning rate", low=0, low_open=True, flag="--lr")
    momentum: float = option(0.9, "SGD momentum (0 <= m < 1)", low=0, high=1, high_open=True, flag="--momentum")
    batch_size: int = option(64, "local mini-batch size", low=1, flag="--batch-size")
    epochs: int = option(1, "local epochs per round (E)", low=1, flag="--epochs")
    optimizer: Literal[OPTIMIZERS] = option(
        "sgd", "sgd (the paper's text) or adam (the authors' code: per-device state kept across rounds)", flag="--optimizer")
    init: Literal[INIT_SCHEMES] = option("keras", "initialization: keras (the authors' code) or torch (PyTorch's defaults)",
                                         flag="--init")
    backend: Literal[("auto", *BACKEND_NAMES)] = option(
        "auto", "training engine: loop (the reference, in this process), processes (the reference loop in one worker process "
        "per core, the same numbers), batched (all devices at once: the GPU path), compiled (batched under torch.compile) or "
        "auto (batched on a GPU; on the CPU processes, or loop for a run whose training would not pay for the workers' start)",
        flag="--backend")
    device: str = option("auto", "where training runs: auto (CUDA when present, but the CPU for a run that would end there "
                         "before CUDA is ready), cpu, cuda[:N]", flag="--device",
                         pattern=r"auto|cpu|cuda(:[0-9]+)?", pattern_text="auto, cpu, cuda or cuda:N")

    noun = "training"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.device.startswith("cuda") and self.backend in CPU_BACKENDS:
            raise ValueError(f"backend {self.backend} trains on the CPU; on {self.device} use backend batched (or auto)")
