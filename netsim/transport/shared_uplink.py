"""A shared uplink in SimPy (FDMA, proportional fair): the band split among the devices transmitting at each moment by an
allocation policy, each at its own rate and power on its share (``rates_bps(devices, sharing)``
and ``powers_w(devices, sharing)``, vectorized over the devices; ``sharing``: the band over the
share, one number for all or one per device).

The policies (``SHARED_ACCESS``, the ``uplink_access`` values this queue serves): ``fdma``, the
band split equally (``sharing`` = the transmitters' count); ``pf``, the gNB's proportional-fair
scheduler (``allocate(devices, at_s)`` gives each its ``sharing``: the band over its blocks,
``netsim.radio.physical.water_fill_prbs``: equal blocks capped by each one's power headroom, in
DFT-s-OFDM sizes). Why the water-filling is proportional fair: over an interval in which the
channel is held (a block-fading round; one step of a moving cell), the long-run allocation of a
per-slot proportional-fair scheduler maximizes ``sum_i log(throughput_i)`` (Kelly 1998; Tse and
Viswanath, Fundamentals of Wireless Communication, 2005, Sec. 6.7; the per-slot metric of
5G-LENA's ``NrMacSchedulerOfdmaPF``, Sionna SYS's ``PFSchedulerSUMIMO``), and with a rate per
block that is constant up to the power headroom cap (TS 38.213 7.1.1: the same power per block
until P_CMAX) the maximum is equal blocks capped by headroom: the water-filling. It is the fluid
limit of the per-slot scheduler (slots of 0.5 ms against transfers of seconds); it leaves out the
multi-user diversity gain of fast fading within a step, the limit of devices scheduled per slot
(PDCCH capacity) and where in the band the blocks lie.

One queue may serve several receivers (``receivers``: each device's, an array indexed by device;
``ul_interference=clock``, where a transmitter's rate depends on who transmits at the other
receivers): each receiver has its own band of ``capacity`` blocks, shared by its own
transmitters by the policy (``allocate`` called once per receiver, on its transmitters in
arrival order; ``fdma``: ``sharing`` = its own transmitters' count), and ``rates_bps(devices,
sharing)`` gets every receiver's transmitters at once (``sharing`` one per device), so that a
start or an end at any receiver changes every transmitter's rate.

Whenever a device starts or finishes, the shares change and every remaining transmission
continues at its new rate and power (a processor-sharing queue with per-device rates). At most
``capacity`` devices share the band (its resource blocks: no share narrower than one block);
the others wait, first come first served, for a transmitter to finish. Each transmission's
energy is the integral of its power over its time on the band (wall clock).

In steps (``steps``: a moving cell's links, ``netsim.radio.physical_links.PhysicalLinks``, whose
channel is read every ``SEGMENT_S``; issue 56 item 2) the rates and powers are also those of the
channel's step: ``rates_bps(devices, sharing, at_s)`` and ``powers_w(devices, sharing, at_s)`` of
the step holding ``at_s``, and the shares are recomputed at each step's start
(``steps.next_step_s``), so a transmission runs at its share's rate of each step it spans
(``sum_k rate_k dt_k = bits``). A transmitter whose link is lost in a step (``steps.share_lost``:
out of coverage, or below the outage floor even on the narrowest share its queue gives) stops
there: its event fires with the energy spent, and ``lost`` holds the bits it got through.

**The stall rule.** A transmitter's rate can be 0 at the current allocation: under
``ul_interference=clock`` the other receivers' transmitters can push it below the outage floor
(Shannon, ``nr``) or below MCS 0's BLER target after four copies (``nr-harq``). At every change
(a start, an end, an abort, a channel step, ``rechannel``) the transmitters are evaluated anew,
all those admitted in arrival order: while some of them have a rate of 0, the last arrival
among those is not scheduled and the allocation and the rates (the interference included) are
recomputed without it. A device not scheduled is *stalled* (``stalled``): it holds its bits,
has no blocks, radiates nothing, interferes with no one, and its time so is counted in
``held_s`` (charged as a grant wait with data pending, ``PhysicalLinks.upload_j``); it is
evaluated again at the next change. The iteration is finite (each pass removes one device:
at most as many passes as transmitters) and ends at a fixed point (every device left has a
positive rate). It cannot leave every admitted device stalled: a set of one device has no
interference (it comes only from transmitters at other receivers), and without interference
no rate is 0: Shannon's and ``nr``'s rates are 0 only where the interference brings a share
below the floor (``RoundChannel.uplink_share_bps``), and ``nr-harq``'s only where MCS 0 misses
its target, which the outage test that admitted the device (``PhysicalLinks.can_upload`` at its
start; in steps ``share_lost`` at each step, ``rechannel`` at a new draw) rules out on every
grant its receiver can give it without interference (PF: each DFT-s-OFDM size up to its power
headroom grant; FDMA: its share is capped at its widest decodable grant, at least one block). So the passes stop at one device at the latest,
and the devices transmitting finish in finite time. One case escapes that test: on FDMA under
the ``nr`` curve a share that widens as others finish spreads a device's power at ``P_CMAX``
over more blocks, and alone on the band it can fall below the curve's lowest CQI, a rate of 0
with no interference at all. A device with no rate even alone has lost its link: it stops there
(``lost`` holds the bits it got through, its sender records an uplink outage), as a transmitter
whose link is lost in a step does.
Dropping one device a pass (not every device at 0 at once) is what the argument needs: two
devices at 0 only through each other's interference would both be dropped at once, and both
would stay stalled with no one transmitting.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

import numpy as np
import simpy

RELATIVE_TOLERANCE = 1e-9  # bits left below this fraction of the payload count as sent (rounding)
SHARED_ACCESS = ("fdma", "pf")  # the uplink accesses served by an ``SharedUplink``: equal shares, proportional fair


class SharedUplink:
    """``transmit(device, bits)`` gives an event that fires, with the transmission's energy (the
    watt-seconds of ``powers_w`` over its wall-clock time), when the last bit is through.
    ``allocate``: None, the band split equally; else ``allocate(devices, at_s)`` gives each
    transmitter's ``sharing`` (the band over its share; ``at_s`` in steps, else None), called
    once per set of transmitters (in their arrival order) and, in steps, per step. ``receivers``:
    None, one receiver; else each device's receiver (indexed by device), each with a band of
    ``capacity`` blocks of its own (the module's "One queue may serve several receivers"),
    read when the device is admitted (a buffered run on a moving cell gives the current
    version's: ``netsim.clock.buffered``) and kept until its transmission ends."""

    def __init__(self, env: simpy.Environment, rates_bps: Callable[..., np.ndarray],
                 powers_w: Callable[..., np.ndarray] | None = None, capacity: int | None = None, steps=None,
                 allocate: Callable[..., np.ndarray] | None = None, receivers=None):
        self.env = env
        self.receivers = receivers
        self.load: dict[int, int] = {}  # receiver -> its transmitters (``receivers`` given)
        self.receiver_of: dict[int, int] = {}  # transmitter -> its receiver, read when it was admitted
        self.allocate = allocate
        self.rates_bps = rates_bps
        self.powers_w = powers_w
        self.capacity = capacity
        self.steps = steps  # None: one channel for every transmission; else the links' steps (the module's "In steps")
        self.lost: dict[int, float] = {}  # device -> bits through, of a transmission lost in a step
        self.held_s: dict[int, float] = {}  # device -> its seconds stalled (the stall rule), read by its sender when it ends
        self._cached_at = None  # the step the cached rates are of
        self.remaining: dict[int, float] = {}
        self.payload: dict[int, float] = {}
        self.spent: dict[int, float] = {}
        self.done: dict[int, simpy.Event] = {}
        self.waiting: deque[tuple[int, float]] = deque()
        self.updated_at = env.now
        self.changed = env.event()
        self._cached: dict[int, tuple[float, float]] | None = None  # (rate, power) of the current set of transmitters
        self.no_rate_alone: int | None = None  # a transmitter with no rate even alone (the stall rule): its link is lost
        env.process(self._serve_process())

    def transmit(self, device: int, bits: float) -> simpy.Event:
        self._advance()
        self.done[device] = event = self.env.event()
        if self._full(device):  # (a receiver with a device waiting is full: the waiting take any free share at once)
            self.waiting.append((device, float(bits)))
        else:
            self._start(device, float(bits))
        return event

    def abort(self, device: int) -> tuple[float, float]:
        """Stop a transmission (a deadline); returns (bits it got through, energy it spent)."""
        self._advance()
        self.done.pop(device)
        if device not in self.remaining:  # still waiting for a share
            self.waiting = deque(entry for entry in self.waiting if entry[0] != device)
            return 0.0, 0.0
        sent = self.payload.pop(device) - self.remaining.pop(device)
        spent = self.spent.pop(device)
        self._left(device)
        self._changed()
        return sent, spent

    def settle(self) -> None:
        """Count every transmission's bits and joules up to now at the rates it has had (before
        the channel its rates are read from changes: ``rechannel``)."""
        self._advance()

    def rechannel(self, lost: Callable[[int], bool]) -> None:
        """The channel changed now (a buffered run's next block-fading draw, ``netsim.clock.buffered``;
        ``settle`` called before it changed): the transmitters whose link is lost on it
        (``lost(device)``) stop here (``lost`` holds the bits they got through, as in steps), and
        every other one continues at its share's rate and power on the new channel."""
        self._advance()
        for device in [d for d in self.remaining if lost(d)]:
            self.lost[device] = self.payload[device] - self.remaining[device]
            self._finish(device)
        self._changed()

    def _receiver(self, device: int) -> int:
        return 0 if self.receivers is None else int(self.receivers[device])

    def _full(self, device: int) -> bool:
        """Whether ``device``'s receiver has ``capacity`` transmitters (no block left for another)."""
        if self.capacity is None:
            return False
        if self.receivers is None:
            return len(self.remaining) >= self.capacity
        return self.load.get(self._receiver(device), 0) >= self.capacity

    def _begin(self, device: int, bits: float) -> None:
        self.remaining[device] = bits
        self.payload[device] = bits
        self.spent[device] = 0.0
        if self.receivers is not None:
            receiver = self.receiver_of[device] = self._receiver(device)
            self.load[receiver] = self.load.get(receiver, 0) + 1

    def _left(self, device: int) -> None:
        if self.receivers is not None:
            self.load[self.receiver_of.pop(device)] -= 1

    def _start(self, device: int, bits: float) -> None:
        self._begin(device, bits)
        self._changed()

    def _admit(self) -> None:
        """A new set of transmitters: the waiting ones take the free shares (each receiver's, first
        come first served)."""
        self._cached = None
        if self.receivers is None:
            while self.waiting and (self.capacity is None or len(self.remaining) < self.capacity):
                self._begin(*self.waiting.popleft())
            return
        still, blocked = deque(), set()
        for device, bits in self.waiting:
            receiver = self._receiver(device)
            if receiver in blocked or self._full(device):
                still.append((device, bits))
                blocked.add(receiver)
            else:
                self._begin(device, bits)
        self.waiting = still

    def _changed(self) -> None:
        self._admit()
        if not self.changed.triggered:
            self.changed.succeed()

    @property
    def stalled(self) -> list[int]:
        """The devices admitted but not scheduled now (the module's "stall rule"), in arrival order."""
        return [d for d, (rate, _) in self._rates().items() if rate <= 0] if self.remaining else []

    def _rates(self) -> dict[int, tuple[float, float]]:
        """Every admitted device's (rate, power) since ``updated_at``, (0, 0) for a stalled one
        (the module's "stall rule"); computed once per set of transmitters (they depend on it
        alone) and, in steps, per step."""
        step = None if self.steps is None else self.steps.step_at(self.updated_at)
        if self._cached is None or step != self._cached_at:
            at = () if step is None else (self.updated_at,)
            scheduled, stalled, self.no_rate_alone = list(self.remaining), [], None
            devices, rates, powers = np.array([], dtype=int), np.array([]), []
            while scheduled:
                devices = np.array(scheduled)
                sharing = self._sharing(devices, at or (None,))
                rates = np.asarray(self.rates_bps(devices, sharing, *at), dtype=float)
                zero = np.flatnonzero(rates <= 0)
                if not zero.size:
                    powers = self.powers_w(devices, sharing, *at).tolist() if self.powers_w is not None else [0.0] * devices.size
                    break
                if devices.size == 1:  # no rate even alone: its link is lost (``_serve_process``)
                    self.no_rate_alone = scheduled[0]
                stalled.append(scheduled.pop(int(zero[-1])))  # the last arrival at 0: not scheduled, the rest re-shared
            else:
                devices, rates = np.array([], dtype=int), np.array([])
            cached = dict(zip(devices.tolist(), zip(rates.tolist(), powers)))
            cached.update({device: (0.0, 0.0) for device in stalled})
            self._cached, self._cached_at = {d: cached[d] for d in self.remaining}, step
        return self._cached

    def _sharing(self, devices: np.ndarray, at: tuple):
        """Each transmitter's ``sharing`` (the band over its share): the policy's, per receiver."""
        if self.receivers is None:
            return devices.size if self.allocate is None else self.allocate(devices, *at)
        receivers = np.array([self.receiver_of[d] for d in devices.tolist()])
        sharing = np.empty(devices.size)
        for receiver in dict.fromkeys(receivers.tolist()):
            mine = receivers == receiver
            sharing[mine] = mine.sum() if self.allocate is None else self.allocate(devices[mine], *at)
        return sharing

    def _lose(self) -> None:
        """In steps: the transmitters whose link is lost in the step of now stop (``lost``)."""
        now = self.env.now
        lost = [d for d in self.remaining if self.steps.share_lost(d, now)]
        while lost:  # (a lost one's share may admit a waiting one, itself lost)
            for device in lost:
                self.lost[device] = self.payload[device] - self.remaining[device]
                self._finish(device)
            lost = [d for d in self.remaining if self.steps.share_lost(d, now)]

    def _advance(self) -> None:
        elapsed = self.env.now - self.updated_at
        if elapsed > 0 and self.remaining:
            for device, (rate, power) in self._rates().items():
                self.remaining[device] -= rate * elapsed
                self.spent[device] += power * elapsed
                if rate <= 0:
                    self.held_s[device] = self.held_s.get(device, 0.0) + elapsed
        self.updated_at = self.env.now

    def _finish(self, device: int) -> None:
        del self.remaining[device], self.payload[device]
        self._left(device)
        self.done.pop(device).succeed(self.spent.pop(device))
        self._admit()

    def _serve_process(self):
        while True:
            if not self.remaining:
                yield self.changed
                self.changed = self.env.event()
                continue
            if self.steps is not None:
                self._lose()
                if not self.remaining:
                    continue
            rates = self._rates()
            if self.no_rate_alone is not None:  # no rate even alone on its receiver: its link is lost now
                device = self.no_rate_alone
                self.lost[device] = self.payload[device] - self.remaining[device]
                self._finish(device)
                continue
            first = min((d for d in self.remaining if rates[d][0] > 0), key=lambda d: self.remaining[d] / rates[d][0])
            wait_s = max(self.remaining[first] / rates[first][0], 0.0)
            if self.steps is not None:  # the shares are recomputed at the next step's start
                edge_s = self.steps.next_step_s(self.env.now) - self.env.now
                if edge_s < wait_s:
                    wait_s, first = edge_s, None
            timer = self.env.timeout(wait_s)
            yield timer | self.changed
            self._advance()
            if self.changed.triggered:
                self.changed = self.env.event()
            if timer.processed and first in self.remaining:
                self._finish(first)
            for device in [d for d in self.remaining if self.remaining[d] <= RELATIVE_TOLERANCE * self.payload[d]]:
                self._finish(device)
