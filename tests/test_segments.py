"""Transfers served in segments on a moving cell (``netsim.radio.physical_links``, issue 56 item 2): the channel
read every ``SEGMENT_S`` from the links' start and held for the step; an upload's airtime solves
``sum_k rate_k dt_k = bits``, its energy is the sum of its steps' power times time, a stream runs
at its weakest listener's rate step by step, and a link lost in a step cuts the transfer there.
On a static cell (or at speed 0) nothing of this runs."""

import copy
import dataclasses

import numpy as np
import pytest

from contract import RoundPlan, Stream
from netsim import simulate_rounds
from netsim.radio.physical_links import SEGMENT_S, PhysicalLinks
from netsim.radio.physical import RoundChannel
from scenarios.definitions.cells import get_cell_system
from tests.shannon_link import SHANNON, SHANNON_SHARED

DEVICES = 12


def _links(start_s=0.0, **radio):
    pinned = SHANNON_SHARED if radio.get("uplink_access") in ("fdma", "pf") else SHANNON  # a rate per step: Shannon's
    system = get_cell_system("umi-3.5ghz", overrides={**pinned, **radio})
    network, channel_rng = system.bind(np.full(DEVICES, 100.0), np.random.SeedSequence(5))
    return network, PhysicalLinks.draw(network, channel_rng, start_s)


def _channel_at(network, links, t_s):
    """The channel a step read at ``t_s`` holds, built here from the moving channel: that
    instant's layout and serving sectors, the links' block-fading draw (or the Doppler fading of
    the instant), and who is out of coverage."""
    layout, downlink, uplink, out = network.dynamics.motion.at(t_s)
    if downlink is None:
        downlink, uplink = links.channel.downlink_fade, links.channel.uplink_fade
    return RoundChannel(dataclasses.replace(network, layout=layout), downlink, uplink), out


def test_an_upload_spanning_steps_solves_the_sum_of_its_segments():
    """An upload from 0.1 s: 0.1 s at the start's rate, 0.2 s at the rate read at 0.2 s, then the
    rest at the rate read at 0.4 s; bits chosen to end 0.05 s into the third step: 0.35 s."""
    network, links = _links(speed_kmh=120.0)
    device = 1
    rates = [_channel_at(network, links, k * SEGMENT_S)[0].uplink_bps[device] for k in range(3)]
    assert rates[0] == links.channel.uplink_bps[device]  # step 0 is the round's own channel
    assert len(set(rates)) == 3  # the device moves: three rates
    bits = rates[0] * 0.1 + rates[1] * 0.2 + rates[2] * 0.05
    airtime_s, lost, through = links.upload(device, bits, 0.1)
    assert airtime_s == pytest.approx(0.35, rel=1e-12) and not lost and through == bits
    assert links.uplink_s(device, bits, 0.1) == airtime_s
    assert abs(links.uplink_s(device, bits) - 0.35) > 1e-3  # held at the start's channel it would not be
    short = rates[0] * 0.05  # inside its first step: exactly the start channel's airtime
    assert links.uplink_s(device, short, 0.1) == links.uplink_s(device, short) == short / rates[0]


def test_an_upload_pays_each_steps_power_for_its_time():
    """Fractional power control (TS 38.213 7.1.1): the power follows the path loss step by step;
    the energy is the sum over the segments of each one's power times its time (TDD's uplink share)."""
    network, links = _links(speed_kmh=120.0)
    device, share = 0, network.system.shares[1]
    powers = [network.transmit_state_w(_channel_at(network, links, k * SEGMENT_S)[0].network.uplink_power_w[device])
              for k in range(3)]  # the device's power while it sends at that step's radiated power (TR 38.840's states)
    assert powers[0] != powers[2]
    joules = links.transmit_j(device, 0.35, 0.1)
    expected = share * (powers[0] * 0.1 + powers[1] * 0.2 + powers[2] * 0.05)
    assert joules == pytest.approx(expected, rel=1e-9)
    assert links.transmit_j(device, 0.05, 0.1) == links.transmit_j(device, 0.05)  # within its first step: today's


def test_a_stream_follows_its_weakest_listener_step_by_step():
    """Two listeners whose rates cross between the first two steps (Doppler fading at 120 km/h):
    the stream runs the first step at the weaker one's rate, the second at the other's."""
    network, links = _links(speed_kmh=120.0, fading_in_time="doppler")
    first, second = (_channel_at(network, links, k * SEGMENT_S)[0].downlink_bps for k in range(2))
    pair = next((a, b) for a in range(DEVICES) for b in range(a + 1, DEVICES)
                if (first[a] < first[b]) != (second[a] < second[b]))
    weakest = [min(rates[list(pair)]) for rates in (first, second)]
    bits = weakest[0] * SEGMENT_S + weakest[1] * 0.1
    assert links.stream_s(pair, bits, 0.0) == pytest.approx(SEGMENT_S + 0.1, rel=1e-12)
    assert all(links.receives(d) for d in pair)


def test_a_device_that_loses_its_link_mid_upload_is_cut_there():
    """An outage floor and Doppler fading at 120 km/h: a device above the floor in the first
    steps and below it in step k sends until k's start (the bits of the steps before), lost; a
    listener that falls below the floor mid-stream is lost from then, the others get the stream."""
    # whole-band grants: the grant held from the start is every step's own
    network, links = _links(speed_kmh=120.0, fading_in_time="doppler", min_bps_per_hz=1.5, ul_allocation="whole-band")
    steps = [_channel_at(network, links, k * SEGMENT_S)[0] for k in range(4)]
    device, k = next((d, k) for d in range(DEVICES) for k in range(1, 4)
                     if not any(s.uplink_outage[d] for s in steps[:k]) and steps[k].uplink_outage[d])
    airtime_s, lost, through = links.upload(device, 1e9, 0.0)
    assert lost and airtime_s == pytest.approx(k * SEGMENT_S, rel=1e-12)
    assert through == pytest.approx(sum(s.uplink_bps[device] for s in steps[:k]) * SEGMENT_S, rel=1e-12)
    listener = next(d for d in range(DEVICES) if not steps[0].downlink_outage[d] and any(s.downlink_outage[d] for s in steps[1:]))
    other = next(d for d in range(DEVICES) if not any(s.downlink_outage[d] for s in steps))
    links.stream_s((listener, other), 3 * SEGMENT_S * steps[0].downlink_bps[other] * 0.5, 0.0)
    assert not links.receives(listener) and links.receives(other)


def _round(**radio):
    pinned = SHANNON_SHARED if radio.get("uplink_access") in ("fdma", "pf") else SHANNON  # a rate per step: Shannon's
    system = get_cell_system("umi-3.5ghz", overrides={**pinned, **radio})
    network, channel_rng = system.bind(np.full(DEVICES, 100.0), np.random.SeedSequence(5))
    every = tuple(range(DEVICES))
    plans = [RoundPlan((Stream(every, 4e6),), {d: 4e6 for d in every}, every) for _ in range(2)]
    return simulate_rounds(plans, network, 4e6, np.random.default_rng(0), channel_rng=channel_rng)


@pytest.mark.parametrize("uplink_access", ["tdma", "fdma"])
def test_a_round_drops_an_upload_cut_by_its_link_with_its_energy(uplink_access):
    """In a round (TDMA grants, or FDMA shares served step by step), an upload whose link falls
    below the floor in a step (Doppler fading at 120 km/h) is a ``dropped`` event spanning its
    airtime, with the bits it got through and the energy it spent, the device does not arrive,
    and the round is deterministic."""
    options = dict(speed_kmh=120.0, fading_in_time="doppler", min_bps_per_hz=1.0, uplink_access=uplink_access)
    records, trace = _round(**options)
    cut = [e for e in trace if e.kind == "dropped" and e.reason == "uplink-outage" and e.end > e.start]
    assert cut
    for e in cut:
        outcome = next(r.outcome for r in records if r.server_round == e.round)
        assert e.entity not in outcome.arrived and outcome.dropped[e.entity] == "uplink-outage"
        assert 0 < e.bits < 4e6 and e.energy_j > 0
    again = _round(**options)
    assert again[1] == trace and [r.outcome for r in again[0]] == [r.outcome for r in records]


def test_the_vectorized_round_on_a_moving_cell_is_the_processes_round():
    system = get_cell_system("umi-3.5ghz", overrides={"speed_kmh": 30.0})
    network, channel_rng = system.bind(np.full(DEVICES, 100.0), np.random.SeedSequence(5))
    every = tuple(range(DEVICES))
    plans = [RoundPlan((Stream(every, 4e6),), {d: 4e6 for d in every}, every) for _ in range(2)]
    runs = [simulate_rounds(plans, copy.deepcopy(network), 4e6, np.random.default_rng(0), channel_rng=copy.deepcopy(channel_rng),
                            simulator=simulator) for simulator in ("timeline", "processes")]
    assert runs[0][1] == runs[1][1]


@pytest.mark.parametrize("radio", [{}, {"speed_kmh": 0.0, "fading_in_time": "doppler"}])
def test_a_static_cell_holds_its_channel_through_every_transfer(radio):
    network, links = _links(**radio)
    assert not links.segmented
    assert links.upload(3, 1e9, 5.0) == (links.uplink_s(3, 1e9), False, 1e9)
    assert links.stream_s((1, 2), 1e9, 5.0) == links.stream_s((1, 2), 1e9)
    assert links.transmit_j(3, 7.0, 5.0) == links.transmit_j(3, 7.0)


def test_handovers_are_logged_when_the_clock_reaches_them_though_transfers_read_ahead():
    """A transfer's airtime reads the channel (and the association) ahead of the clock; the
    handovers are still logged at their instants: every event the trace lists after a handover
    ended at or after it (the trace is appended in the clock's order), and each lies in its round."""
    records, trace = _round(speed_kmh=120.0)
    at = [i for i, e in enumerate(trace) if e.kind == "handover"]
    assert at
    for i in at:
        assert all(e.end >= trace[i].start for e in trace[i + 1:])
    spans = {r.server_round: (r.start, r.end) for r in records}
    for i in at:
        start, end = spans[trace[i].round]
        assert start <= trace[i].start <= end


def test_a_buffered_upload_cut_by_its_link_is_dropped_with_its_energy():
    """FedBuff on a moving cell with an outage floor: an upload whose link falls below the floor
    mid-way is a ``dropped`` event spanning it (bits through, energy spent), and the run's
    invariants hold (``check_invariants``: dispatched = arrived + dropped + in flight, energy once)."""
    from tests.test_buffered_dynamics import _cell_run

    _, trace, _, _ = _cell_run({"speed_kmh": 120.0, "fading_in_time": "doppler", "min_bps_per_hz": 1.0, **SHANNON})
    cut = [e for e in trace if e.kind == "dropped" and e.reason == "uplink-outage" and e.end > e.start]
    assert cut
    assert all(0 < e.bits < 2e5 and e.energy_j > 0 for e in cut)


def _fdma_links(**radio):
    return _links(uplink_access="fdma", **radio)


def test_an_fdma_upload_spanning_two_steps_runs_at_each_steps_share_rate():
    """FDMA on a moving cell (120 km/h): two devices of one receiver start at 0.1 s, sharing the
    band (half each). The first sends 0.05 s of its half-band rate of step 0 and is done at 0.15 s;
    the second then has the whole band: until 0.2 s at step 0's rate, then at the rate read at
    0.2 s (its share's rate and power of step 1's channel), done 0.1 s into step 1: at 0.3 s.
    Its energy is the watt-seconds of each piece at that piece's share power."""
    import simpy

    network, links = _fdma_links(speed_kmh=120.0)
    assert links.segmented
    queue_of = [int(q) for q in links.uplink_queue]
    a, b = next((a, b) for a in range(DEVICES) for b in range(a + 1, DEVICES) if queue_of[a] == queue_of[b])
    links.fdma_sharing = {queue_of[a]: 2}
    steps = [_channel_at(network, links, k * SEGMENT_S)[0] for k in range(2)]

    def rate(k, device, sharing):
        return float(steps[k].uplink_share_bps(np.array([device]), sharing)[0])

    def power(k, device, sharing):
        return float(steps[k].network.share_power_w(np.array([device]), sharing)[0])

    assert rate(0, b, 1) != rate(1, b, 1)  # it moves: the step's channel is another
    bits_a = rate(0, a, 2) * 0.05
    bits_b = rate(0, b, 2) * 0.05 + rate(0, b, 1) * 0.05 + rate(1, b, 1) * 0.1
    env = simpy.Environment()
    uplink = links.shared_uplink(env, queue_of[a])
    done = {}

    def send(device, bits):
        yield env.timeout(0.1)
        spent = yield uplink.transmit(device, bits)
        done[device] = (env.now, spent)

    env.process(send(a, bits_a))
    env.process(send(b, bits_b))
    env.run()
    assert done[a][0] == pytest.approx(0.15, rel=1e-9)
    assert done[b][0] == pytest.approx(0.3, rel=1e-9)
    assert done[b][1] == pytest.approx(power(0, b, 2) * 0.05 + power(0, b, 1) * 0.05 + power(1, b, 1) * 0.1, rel=1e-9)
    assert not uplink.lost
    held_end_s = 0.15 + (bits_b - rate(0, b, 2) * 0.05) / rate(0, b, 1)  # its start's rate held (before: "What is not built")
    assert abs(held_end_s - 0.3) > 1e-3


@pytest.mark.parametrize("radio", [{}, {"speed_kmh": 0.0, "fading_in_time": "doppler"}])
def test_a_static_fdma_uplink_keeps_one_channel(radio):
    """On a static cell (or at speed 0) the FDMA medium has no steps: its shares' rates are the
    links' own for every transmission (the rates of today, bit for bit)."""
    network, links = _fdma_links(**radio)
    uplink = links.shared_uplink(__import__("simpy").Environment(), 0)
    assert uplink.steps is None and not links.segmented
    devices = np.arange(3)
    assert np.array_equal(links.uplink_share_bps(devices, 2, 5.0), links.channel.uplink_share_bps(devices, 2))


def test_a_buffered_stream_every_listener_loses_mid_way_is_on_the_air_with_its_bits():
    """FedBuff (K = C = 1) on a moving cell with an outage floor, a 20 Mbit model: a stream whose
    listener falls below the floor mid-way stops at that step's start (a multiple of 200 ms from
    its start), its listener dropped ``downlink-outage`` at its end; it was on the air, so its
    ``downlink`` event carries its bits, as a synchronous round's (the one stream step,
    ``netsim.transport.lifecycle.send_stream``; before, a buffered one said 0), and an
    aggregation's record counts its interval's."""
    from netsim.clock.budget import Budget
    from netsim.clock.buffered import Buffered, run_buffered
    from netsim.clock.engine import RunOptions
    from tests.test_buffered_dynamics import Ledger, check_invariants

    system = get_cell_system("umi-3.5ghz", overrides={"speed_kmh": 120.0, "fading_in_time": "doppler", "min_bps_per_hz": 1.0})
    network, channel_rng = system.bind(np.full(6, 100.0), np.random.SeedSequence(5))
    trace = []
    ledger = Ledger(6, 2e7, trace)
    versions, _ = run_buffered(ledger, network, Buffered(1, 1), 10, np.random.default_rng(0),
                               RunOptions(channel_rng=channel_rng, budget=Budget({})), trace, np.random.default_rng(1))
    check_invariants(versions, trace, ledger, network.dynamics)
    lost = [e for e in trace if e.kind == "downlink" and e.end > e.start
            and any(x.kind == "dropped" and x.reason == "downlink-outage" and x.start == e.end for x in trace)]
    assert lost
    for e in lost:
        assert e.bits == 2e7
        steps = (e.end - e.start) / SEGMENT_S
        assert steps == pytest.approx(round(steps), abs=1e-9)  # cut at a step's start
    for record in versions[1:]:  # each aggregation's bits are its interval's streams'
        assert record.downlink_bits == sum(x.bits for x in trace if x.kind == "downlink" and x.round == record.server_round)


@pytest.mark.parametrize("abstraction", ["shannon", "nr"])
def test_a_power_limit_grant_held_narrower_than_the_steps_keeps_its_power_per_block(abstraction):
    """``ul_allocation=power-limit`` on a moving cell: where the grant a device holds from its
    upload's start is narrower than a later step's own grant, it sends in that step at TS 38.213
    7.1.1's open-loop power on the blocks it holds. Below ``P_CMAX`` that is the same power per
    block, so the same SINR: the step's rate and radiated power times held over own blocks. Every
    energy of a round is a finite number (the held grant's power was nan, computed without the
    device's coupling loss, and rounds ran for hundreds of seconds)."""
    network, links = _links(speed_kmh=120.0, ul_allocation="power-limit", link_abstraction=abstraction)
    found = 0
    for k in range(40):
        channel = _channel_at(network, links, k * SEGMENT_S)[0]
        for device in range(DEVICES):
            held, own = int(links.grant_prbs(device)), int(channel.allocated_prbs[device])
            if held < own and not channel.uplink_outage[device]:
                found += 1
                assert links._uplink_rate(device, held, k) == pytest.approx(channel.uplink_bps[device] * held / own, rel=1e-12)
                assert links._uplink_power_w(device, held, k) == pytest.approx(
                    network.transmit_state_w(channel.uplink_power_w[device] * held / own), rel=1e-12)
    assert found
    records, _ = _round(speed_kmh=30.0, ul_allocation="power-limit", link_abstraction=abstraction)
    assert all(np.isfinite(e) and e > 0 for r in records for e in r.energy_j.values())
