"""Every setting a run takes, typed and range-checked in one place.

The run's knobs (rounds, seed, evaluation period, participation), the
network's (``rho``, ``T_min``, ``1/mu``, deadline, mode) and the bounds a machine can hold.
A bad value gets one line naming the key and the allowed range; non-finite numbers are
always refused, so no NaN or infinity reaches a result file.
"""

from __future__ import annotations

from contract.setting import MAX_COUNT, MAX_DEVICES, Setting, UsageError, non_negative, positive, positive_int  # noqa: F401 (the settings' kinds)

MAX_ROUNDS = 100_000  # every round's record and plan are kept in memory and written out
MAX_SEED = 2**63 - 1  # numpy's SeedSequence takes any non-negative int; this keeps it a JSON/CSV int
MAX_SEEDS = 10_000  # seeds of one command (compare, sweep, reproduce): each is a whole run
MAX_ROUND_TIME_DEVICES = 1_000_000  # round-time: per-device plan entries and timeline arrays
MAX_ROUND_TIME_EVENTS = 100_000_000  # round-time: devices x rounds (about a minute at 5 ms per 10,000-device round)
MAX_CELL_DRAWS = 10_000_000  # cell: devices x fading rounds (two SNRs each, 160 MB)

# Network settings are bounded by what the clock can hold. Simulated time is a float64 on which
# rounds add up; past 2**53 of the time unit an added T_dl (one model on the downlink) is lost
# to rounding, so the largest run must end below EXACT_TIME. What each setting can add to the
# end of the largest run (MAX_ROUNDS rounds of MAX_DEVICES devices):
# - rho: every device uploads at most 2 models a round (SCAFFOLD's model and control variate),
#   one after another: 2 rho MAX_DEVICES MAX_ROUNDS = 2e10 rho T_dl, below 2**53 up to
#   rho = 4.5e5: MAX_RHO = 1e5.
# - t_min and 1/mu: a round lasts at most t_min + 45/mu of compute (45 bounds numpy's largest
#   Exp(1) draw: its ziggurat tail adds -ln(2**-53) = 36.7 to 7.7): 46 MAX_ROUNDS x below 2**53
#   up to 2e9: MAX_COMPUTE_TIME = 1e9.
# - deadline: a round with a drop lasts until the deadline: MAX_ROUNDS x below 2**53 up to 9e10:
#   MAX_DEADLINE = 1e10 (T_dl, or seconds on a cell).
# Bits are counts of models (at most MAX_DEVICES streams of a few models a round) times the
# model's bits, far below overflow; a run whose numbers still stop being finite is diverged.
EXACT_TIME = 2.0**53
MAX_RHO = 1e5
MAX_COMPUTE_TIME = 1e9
MAX_DEADLINE = 1e10


# --- the run and the network ---------------------------------------------------------
RUN_SETTINGS: dict[str, Setting] = {
    "rounds": Setting(int, low=1, high=MAX_ROUNDS, none=True),
    "seed": Setting(int, low=0, high=MAX_SEED),
    "evaluate_every": Setting(int, low=1, high=MAX_ROUNDS),
    "participation": Setting(float, low=0, high=1, low_open=True, none=True),
}

SCENARIO_KNOBS: dict[str, Setting] = {  # what a scenario may let a run change (Scenario.knobs)
    "devices": Setting(int, low=1, high=MAX_DEVICES, none=True),
    "alpha": Setting(float, low=0, low_open=True, none=True),  # Dirichlet label-shift concentration
}

NETWORK_SETTINGS: dict[str, Setting] = {
    "mode": Setting(str, choices=("pipelined", "barrier")),
    "deadline": Setting(float, low=0, high=MAX_DEADLINE, low_open=True, none=True),
    "rho": Setting(float, low=0, high=MAX_RHO, low_open=True, none=True),
    "t_min": Setting(float, low=0, high=MAX_COMPUTE_TIME, none=True),
    "inv_mu": Setting(float, low=0, high=MAX_COMPUTE_TIME, none=True),
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


# --- communication: update codecs and scheduling (issue 21; RunSpec fields of the same names) ---
COMMUNICATION_DEFAULTS = {"uplink_codec": "none", "downlink_codec": "none", "scheduler": "random"}


def check_communication(values: dict) -> dict:
    """``uplink_codec``/``downlink_codec`` (``learning.codecs`` specs, e.g. ``qsgd:bits=4``) and
    ``scheduler`` (a ``netsim.scheduling`` policy), checked: UsageError naming the setting."""
    from learning.codecs import parse_codec
    from netsim.scheduling import POLICIES

    checked = {}
    for key in ("uplink_codec", "downlink_codec"):
        try:
            checked[key] = parse_codec(values[key], downlink=key == "downlink_codec").spec
        except ValueError as error:
            raise UsageError(f"{key.replace('_', '-')}: {error}") from None
    if values["scheduler"] not in POLICIES:
        raise UsageError(f"scheduler must be one of {', '.join(POLICIES)}, got {values['scheduler']!r}")
    checked["scheduler"] = values["scheduler"]
    return checked
