"""The network system: link speeds, device compute model, timing mode, deadline."""

from __future__ import annotations

from dataclasses import MISSING, dataclass
from itertools import repeat
from typing import Literal

import numpy as np

from contract import RoundPlan
from contract.setting import check_declared, option
from netsim.normalized.distributions import ShiftedExponential
from netsim.transport.durations import MAX_COMPUTE_TIME, MAX_DEADLINE, MAX_RHO, TIMING_MODES, RoundDurations

DUPLEX = ("full", "half")  # whether downlink and uplink each have a medium of their own, or share one
from netsim.kind import Network, SystemKind


@dataclass(frozen=True)
class NetworkSystem(SystemKind, Network):
    """Normalized system of the journal paper (V-D); it is its own network (``Network``).

    ``t_dl`` is the time of one model on the downlink (the time unit), ``rho = T_ul / T_dl``;
    a payload of ``b`` bits takes ``t_dl * b / model_bits`` down and ``rho`` times that up.
    Devices compute for ``t_min + Exp(1/inv_mu)``.

    ``barrier``: all downlink, then all compute, then all uplink (the paper's model).
    ``pipelined``: a device computes as soon as its last stream arrived and queues for the
    uplink as soon as it is done. ``deadline`` (same unit, from the round start) drops
    devices whose upload would end after it; the round then lasts until the deadline.
    ``duplex``: ``full`` (each link its own medium: a pipelined upload may overlap the streams)
    or ``half`` (one medium: the barrier round's ``T_dl (m + rho N)`` is already half duplex; a
    pipelined round is refused by the run's checks; buffered aggregation sends streams and
    uploads one at a time on one medium).
    """

    rho: float = option(MISSING, "T_ul / T_dl", low=0, low_open=True, high=MAX_RHO)
    t_min: float = option(MISSING, "minimum compute time (T_dl)", low=0, high=MAX_COMPUTE_TIME)
    inv_mu: float = option(MISSING, "mean extra compute delay 1/mu (T_dl)", low=0, high=MAX_COMPUTE_TIME)
    t_dl: float = option(1.0, "one model's downlink time (the time unit)", low=0, low_open=True)
    mode: Literal[TIMING_MODES] = option("pipelined", "timing mode")
    deadline: float | None = option(None, "round deadline (T_dl)", low=0, low_open=True, high=MAX_DEADLINE)
    duplex: Literal[DUPLEX] = option("full", "full: downlink and uplink each on a medium of their own (FDD); half: one "
                                     "medium, one transfer at a time either way (TDD; the paper's barrier round)", omit_default=True)

    def __post_init__(self) -> None:
        """The declared bounds (``option``): a run's ``--rho``, ``--t-min``, ``--inv-mu``,
        ``--mode`` and ``--deadline`` take theirs from here."""
        check_declared(self)

    @property
    def t_ul(self) -> float:
        return self.rho * self.t_dl

    @property
    def compute(self) -> ShiftedExponential:
        return ShiftedExponential(self.t_min, self.inv_mu)

    def downlink_time(self, bits: float, model_bits: float) -> float:
        return self.t_dl * bits / model_bits

    def uplink_time(self, bits: float, model_bits: float) -> float:
        return self.t_ul * bits / model_bits

    def round_durations(self, plan: RoundPlan, model_bits: float, rng: np.random.Generator) -> RoundDurations:
        """Every stream's and upload's airtime and every participant's compute time.

        Compute times are drawn up front in participant order, so barrier and pipelined runs of
        the same seed see the same draws (common random numbers).
        """
        participants = plan.participants
        draws = self.compute.sample(rng, len(participants))
        scale = np.fromiter(map(plan.compute_scale.get, participants, repeat(1.0)), dtype=float, count=len(participants))
        stream_bits = np.array([stream.bits for stream in plan.streams], dtype=float)
        uplink_bits = np.fromiter(map(plan.uplink_bits.get, participants, repeat(0.0)), dtype=float, count=len(participants))
        return RoundDurations(
            stream_s=self.t_dl * stream_bits / model_bits,
            compute_s=draws * scale,
            uplink_s=self.t_ul * uplink_bits / model_bits,
        )
