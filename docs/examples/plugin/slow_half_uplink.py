"""A normalized system whose odd-numbered devices upload at half the speed of the even ones."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from contract import RoundPlan
from netsim.transport.durations import RoundDurations
from scenarios.definitions.systems import SystemFactory


@dataclass(frozen=True)
class SlowHalfUplink:
    """Downlink: one model takes ``t_dl`` (the time unit). Uplink: ``rho`` times that for even
    devices, twice as long for odd ones. Compute: ``t_min`` plus an exponential of mean ``inv_mu``."""

    mode: str = "pipelined"
    deadline: float | None = None
    t_dl: float = 1.0
    rho: float = 2.0
    t_min: float = 1.0
    inv_mu: float = 0.5

    def round_durations(self, plan: RoundPlan, model_bits: float, rng: np.random.Generator) -> RoundDurations:
        devices = np.array(plan.participants, dtype=int)
        slowdown = np.where(devices % 2 == 1, 2.0, 1.0)
        uplink_bits = np.array([plan.uplink_bits.get(d, 0.0) for d in plan.participants], dtype=float)
        scale = np.array([plan.compute_scale.get(d, 1.0) for d in plan.participants], dtype=float)
        return RoundDurations(
            stream_s=self.t_dl * np.array([s.bits for s in plan.streams], dtype=float) / model_bits,
            compute_s=(self.t_min + rng.exponential(self.inv_mu, devices.size)) * scale,
            uplink_s=self.t_dl * self.rho * slowdown * uplink_bits / model_bits,
        )


SYSTEMS = [SystemFactory("slow-half-uplink", "rho=2 for even devices, 4 for odd ones; T_min=1, 1/mu=0.5", SlowHalfUplink)]
