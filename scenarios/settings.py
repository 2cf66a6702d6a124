"""Every setting a run takes, typed and range-checked in one place.

The run's knobs (rounds, seed, evaluation period, participation), the
network's (``rho``, ``T_min``, ``1/mu``, deadline, mode) and the bounds a machine can hold.
A bad value gets one line naming the key and the allowed range; non-finite numbers are
always refused, so no NaN or infinity reaches a result file.
"""

from __future__ import annotations

from learning.setting import Setting, UsageError, non_negative, positive, positive_int  # noqa: F401 (the settings' kinds)

MAX_ROUNDS = 100_000  # every round's record and plan are kept in memory and written out
MAX_SEED = 2**63 - 1  # numpy's SeedSequence takes any non-negative int; this keeps it a JSON/CSV int
MAX_ROUND_TIME_DEVICES = 1_000_000  # round-time: per-device plan entries and timeline arrays
MAX_ROUND_TIME_EVENTS = 100_000_000  # round-time: devices x rounds (about a minute at 5 ms per 10,000-device round)


# --- the run and the network ---------------------------------------------------------
RUN_SETTINGS: dict[str, Setting] = {
    "rounds": Setting(int, low=1, high=MAX_ROUNDS, none=True),
    "seed": Setting(int, low=0, high=MAX_SEED),
    "evaluate_every": Setting(int, low=1, high=MAX_ROUNDS),
    "participation": Setting(float, low=0, high=1, low_open=True, none=True),
}

SCENARIO_KNOBS: dict[str, Setting] = {  # what a scenario may let a run change (Scenario.knobs)
    "devices": Setting(int, low=1, high=100_000, none=True),
    "alpha": Setting(float, low=0, low_open=True, none=True),  # Dirichlet label-shift concentration
}

NETWORK_SETTINGS: dict[str, Setting] = {
    "mode": Setting(str, choices=("pipelined", "barrier")),
    "deadline": Setting(float, low=0, low_open=True, none=True),
    "rho": Setting(float, low=0, low_open=True, none=True),
    "t_min": Setting(float, low=0, none=True),
    "inv_mu": Setting(float, low=0, none=True),
}


def training_settings() -> dict[str, Setting]:
    """The fields of ``learning.training.LocalTraining`` a run may override."""
    from learning.engine import BACKENDS
    from learning.models import INIT_SCHEMES
    from learning.training import OPTIMIZERS

    return {
        "lr": positive(),
        "momentum": Setting(float, low=0, high=1, high_open=True),
        "batch_size": positive_int(),
        "epochs": positive_int(),
        "optimizer": Setting(str, choices=OPTIMIZERS),
        "init": Setting(str, choices=INIT_SCHEMES),
        "backend": Setting(str, choices=("auto", *BACKENDS)),
        "device": Setting(str, pattern=r"auto|cpu|cuda(:[0-9]+)?", pattern_text="auto, cpu, cuda or cuda:N"),
    }


def check_training(training: dict) -> dict:
    """Training overrides, each typed and range-checked (unknown keys refused)."""
    table = training_settings()
    if not isinstance(training, dict):
        raise UsageError(f"training must be a table of key = value, got {training!r}")
    return {key: check_setting(table, key, value, prefix="training ") for key, value in training.items()}


def check_setting(table: dict[str, Setting], key: str, value, prefix: str = ""):
    """``value`` checked against ``table[key]``; unknown keys name the known ones."""
    if key not in table:
        raise UsageError(f"unknown {prefix}setting {key!r}; known: {', '.join(table) or 'none'}")
    return table[key].check(prefix + key, value)
