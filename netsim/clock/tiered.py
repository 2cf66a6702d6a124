"""Semi-asynchronous tiered aggregation on the clock: FedAT (Chai et al. 2021, "FedAT: a
high-performance and communication-efficient federated learning system with asynchronous
tiers", SC '21), an orchestrator built on the lifecycle of ``netsim.clock.buffered`` (its transport,
its device processes, its reading of the device's state and channel at each step, its records
and drops): only when to dispatch and when to aggregate differ.

Tiers (FedAT's tiering by response latency, Sec. 4): the devices sorted by their expected
latency (``expected_latency_s``: mean compute time and one model down and up at the device's
mean channel, no fading; FedAT profiles it by timing the clients), split into ``M`` tiers of as
equal sizes as they allow, the fastest first. Within a tier, synchronous rounds: the tier's
members present now are sent the current global version together (one stream), and the round
ends when each has reported or been dropped. Across tiers, asynchronous: each tier starts its
next round as soon as its last one ended, and each round's end updates the global model with
FedAT's cross-tier weights (``learning.asynchronous.TieredServer``). A round in which nobody
reported makes no version; its tier then waits for another tier's (a device trains each
version at most once, as under FedBuff).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import simpy

from contract import Dispatch
from netsim.clock.buffered import Buffered, BufferedRun, drive
from netsim.clock.engine import RunOptions
from netsim.transport.trace import TraceEvent


@dataclass(frozen=True)
class Tiered:
    """The orchestrator's settings: the devices of each tier, the fastest first."""

    tiers: tuple[tuple[int, ...], ...]

    def check(self, num_devices: int) -> None:
        """ValueError unless every device is in exactly one non-empty tier."""
        members = sorted(d for tier in self.tiers for d in tier)
        if members != list(range(num_devices)) or not all(self.tiers):
            raise ValueError(f"tiers must hold each of the {num_devices} devices once, none empty; got {self.tiers}")


def expected_latency_s(network, num_devices: int, model_bits: float) -> np.ndarray:
    """Each device's expected response latency: its mean compute time (``expectations``) plus
    one model's downlink and uplink airtime, on a normalized system ``T_dl + T_ul``, on a cell
    at the device's mean downlink and uplink SNR (``mean_snr_db``; inf below the outage floor)."""
    expected = network.expectations(num_devices, model_bits, model_bits)
    latency = np.asarray(expected.compute_s, dtype=float).copy()
    if expected.uplink_s_per_bit is not None:
        return latency + model_bits * (expected.downlink_s_per_bit + expected.uplink_s_per_bit)
    system = network.system
    down_db, up_db = system.mean_snr_db(network.layout)
    with np.errstate(divide="ignore"):
        latency += model_bits / network.downlink_bps(system.efficiency(down_db))
        latency += model_bits / network.uplink_bps(system.efficiency(up_db, direction="uplink"))
    return latency


def latency_tiers(latency_s, count: int) -> tuple[tuple[int, ...], ...]:
    """The devices sorted by ``latency_s`` (ties in device order), in ``count`` tiers of as
    equal sizes as they allow (``np.array_split``), the fastest first."""
    latency_s = np.asarray(latency_s, dtype=float)
    if not 1 <= count <= latency_s.size:
        raise ValueError(f"tiers must be in 1..{latency_s.size} (the devices), got {count}")
    order = np.argsort(latency_s, kind="stable")
    return tuple(tuple(sorted(int(d) for d in part)) for part in np.array_split(order, count))


class TieredRun(BufferedRun):
    """One FedAT run: ``BufferedRun``'s lifecycle, rounds per tier."""

    def __init__(self, env, learner, network, settings: Tiered, rng, options: RunOptions, versions: int):
        self.tiers = settings.tiers
        self.tier_of = {d: m for m, tier in enumerate(self.tiers) for d in tier}
        self.pending: list[set[int]] = [set() for _ in self.tiers]  # each tier's round: members not yet reported
        self.collected: list[list] = [[] for _ in self.tiers]  # each tier's round: the updates that arrived
        super().__init__(env, learner, network, Buffered(1), rng, options, versions)
        settings.check(self.num_devices)

    def dispatch_idle(self) -> None:
        """Every tier whose round has ended starts the next: the current version to each member
        present now that has not trained from it, as one stream (the others passed over with
        their reason, ``BufferedRun.dispatch_idle``'s way)."""
        now = self.env.now
        for m, tier in enumerate(self.tiers):
            if self.pending[m]:
                continue
            eligible = [d for d in tier if self.offered[d] < self.version]
            if not eligible:
                continue
            absent = self.absent(eligible)
            for device, why in sorted(absent.items()):
                if self.skipped.get(device) != why:
                    self.skipped[device] = why
                    self.trace.append(TraceEvent(self.version + 1, "dropped", device, now, now, 0.0, 0.0, why))
                    self.interval.dropped[device] = why
            if absent:
                self.wake(min(self.dynamics.back_s(d, now, why) for d, why in absent.items()))
            chosen = sorted(d for d in eligible if d not in absent)
            if chosen:
                self.start_round(m, chosen)

    def start_round(self, tier: int, chosen: list[int]) -> None:
        """Tier ``tier``'s round: the current version to ``chosen``, one stream, compute draws in device order."""
        for device in chosen:
            self.idle.remove(device)
            self.skipped.pop(device, None)
            self.offered[device] = self.version
            self.learner.dispatch(Dispatch(device, self.version, self.model_bits))
        self.pending[tier] = set(chosen)
        self.training += len(chosen)
        draws = self.network.compute.sample(self.rng, len(chosen))
        self.env.process(self.send(tuple(chosen), dict(zip(chosen, draws.tolist())), self.version))

    def arrive(self, update) -> None:
        """An update of a tier's round: the learner's local update, kept until the round ends."""
        if self.finished.triggered or self.recorder.stopped:
            return
        self.updates += 1
        self.learner.local_update(update)
        self.collected[self.tier_of[update.device]].append(update)
        self.release(update.device)

    def release(self, device: int) -> None:
        """``device`` reported or was dropped: when it was its tier's last, the round ends (its
        updates, if any, make the next global version) and the tier starts its next."""
        self.training -= 1
        self.idle.append(device)
        tier = self.tier_of[device]
        self.pending[tier].discard(device)
        if not self.pending[tier] and self.collected[tier]:
            self.buffer, self.collected[tier] = self.collected[tier], []
            self.aggregate()
        self.dispatch_idle()
        self.keep_going()


def run_tiered(learner, network, settings: Tiered, versions: int, rng, options: RunOptions = RunOptions(),
               trace: list | None = None):
    """Run ``learner`` (``learning.asynchronous.TieredServer`` over the same tiers) on ``network``
    until ``versions`` tier rounds have updated the global model (or ``options.budget``); the
    records and trace as ``netsim.clock.buffered.run_buffered`` gives them."""
    if versions < 1:
        raise ValueError(f"versions must be >= 1, got {versions}")
    if options.scheduler is not None:
        raise ValueError("a scheduler chooses a round's participants; FedAT's tiers dispatch to their members")
    env = simpy.Environment()
    return drive(TieredRun(env, learner, network, settings, rng, options, versions), trace)
