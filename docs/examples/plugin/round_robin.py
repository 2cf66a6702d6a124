"""Round-robin scheduling: the devices take turns, ``count`` of them a round in index order."""

from __future__ import annotations

from netsim.scheduling import ChannelReport, Policy


class RoundRobin(Policy):
    """Round r schedules the ``count`` devices after round r-1's, wrapping around."""

    name = "round-robin"

    def choose(self, server_round: int, report: ChannelReport) -> tuple[int, ...]:
        first = (server_round - 1) * self.count
        return tuple(sorted((first + k) % self.num_devices for k in range(self.count)))


SCHEDULERS = [RoundRobin]
