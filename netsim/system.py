"""The network system: link speeds, device compute model, timing mode, deadline."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat

import numpy as np

from contract import RoundPlan
from netsim.distributions import ShiftedExponential
from netsim.durations import TIMING_MODES, RoundDurations
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
    """

    rho: float
    t_min: float
    inv_mu: float
    t_dl: float = 1.0
    mode: str = "pipelined"
    deadline: float | None = None

    def __post_init__(self) -> None:
        if not self.rho > 0:
            raise ValueError(f"rho must be > 0, got {self.rho}")
        if not self.t_dl > 0:
            raise ValueError(f"t_dl must be > 0, got {self.t_dl}")
        if self.t_min < 0 or self.inv_mu < 0:
            raise ValueError(f"t_min and inv_mu must be >= 0, got {self.t_min}, {self.inv_mu}")
        if self.mode not in TIMING_MODES:
            raise ValueError(f"unknown timing mode {self.mode!r}; choose from {', '.join(TIMING_MODES)}")
        if self.deadline is not None and not self.deadline > 0:
            raise ValueError(f"deadline must be > 0, got {self.deadline}")

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
