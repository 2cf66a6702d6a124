"""A cell in time on the clock (netsim.dynamics.rounds, availability, battery): the default cell
binds no dynamics; devices out of coverage, switched off or empty are dropped with their reason,
in the outcome and the trace; handovers are logged; the report is the channel of its instant."""

import json

import numpy as np
import pytest

from contract import RoundPlan, Stream
from netsim import simulate_rounds
from netsim.dynamics.availability import OnOff, TraceAvailability
from netsim.dynamics.battery import Batteries
from scenarios.definitions.cells import get_cell_system

DEVICES = 12


def _plans(rounds, devices=DEVICES, bits=2e5):
    every = tuple(range(devices))
    return [RoundPlan((Stream(every, bits),), {d: bits for d in every}, every) for _ in range(rounds)]


def _bind(**radio):
    system = get_cell_system("umi-3.5ghz", overrides=radio)
    return system.bind(np.full(DEVICES, 100.0), np.random.SeedSequence(5))


def test_a_static_cell_binds_no_dynamics_and_draws_what_it_drew():
    network, _ = _bind()
    assert network.dynamics is None
    moving, _ = _bind(speed_kmh=3.0)
    assert moving.dynamics.motion is not None and moving.dynamics.availability is None
    np.testing.assert_array_equal(moving.layout.x_m, network.layout.x_m)  # the same drop to start from


def test_on_off_availability_is_stationary_and_any_order():
    rng = np.random.default_rng(0)
    process = OnOff(rng, 4000, 30.0, 10.0)
    late = process.available(500.0)
    assert late.mean() == pytest.approx(0.75, abs=0.03)
    assert process.available(0.0).mean() == pytest.approx(0.75, abs=0.03)
    np.testing.assert_array_equal(process.available(500.0), late)


def test_trace_availability_reads_fedscale_intervals(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"devices": {"0": {"active": [0, 500], "inactive": [300, 800], "finish_time": 1000},
                                            "1": {"active": [100], "inactive": [200], "finish_time": 400}}}))
    trace = TraceAvailability.load(path, 2)
    assert [trace.available(t).tolist() for t in (50.0, 150.0, 400.0, 650.0, 1150.0)] == \
        [[True, False], [True, True], [False, False], [True, False], [True, False]]  # each by its own period
    path.write_text(json.dumps({"devices": {"0": {"active": [10], "inactive": [5], "finish_time": 100}}}))
    with pytest.raises(ValueError, match="device 0's intervals must be ordered"):
        TraceAvailability.load(path, 1)
    path.write_text(json.dumps({"devices": {"0": {"active": [0], "inactive": [5], "finish_time": 100}}}))
    with pytest.raises(ValueError, match="no entry for device 1"):
        TraceAvailability.load(path, 2)


def test_batteries_report_who_ran_out():
    batteries = Batteries(3, 1.0)
    assert batteries.drain({0: 0.4, 1: 1.5}) == [1]
    assert batteries.drain({0: 0.7}) == [0]
    assert batteries.empty.tolist() == [True, True, False]


def test_an_empty_battery_drops_its_device_from_then_on():
    network, channel_rng = _bind(battery_j=1e-3, receive_power_w=0.1)
    records, trace = simulate_rounds(_plans(3), network, 1e5, np.random.default_rng(0), channel_rng=channel_rng)
    spent = [r.outcome.dropped for r in records]
    assert any(why == "battery" for why in spent[0].values())  # ran out in the first round: its upload lost
    assert set(spent[-1].values()) == {"battery"} and len(spent[-1]) == DEVICES
    assert sum(e.kind == "dropped" and e.reason == "battery" for e in trace) == sum(w == "battery" for d in spent for w in d.values())


def test_unavailable_devices_are_dropped_and_the_others_run():
    network, channel_rng = _bind(mean_on_s=5.0, mean_off_s=5.0)
    records, trace = simulate_rounds(_plans(4), network, 1e5, np.random.default_rng(0), channel_rng=channel_rng)
    off = {d for r in records for d, why in r.outcome.dropped.items() if why == "unavailable"}
    assert off and all(set(r.outcome.arrived).isdisjoint(k for k, w in r.outcome.dropped.items() if w == "unavailable") for r in records)
    assert {e.entity for e in trace if e.reason == "unavailable"} == off


def test_a_moving_cell_logs_handovers_and_drops_devices_out_of_the_sites_coverage():
    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": 120.0, "coverage": "site"})
    network, channel_rng = system.bind(np.full(DEVICES, 100.0), np.random.SeedSequence(3))
    plans = _plans(40)
    records, trace = simulate_rounds(plans, network, 1e6, np.random.default_rng(0), channel_rng=channel_rng)
    assert records[-1].end > 10.0  # 40 rounds of ~0.5 s: the devices crossed sectors at 33 m/s
    handovers = [e for e in trace if e.kind == "handover"]
    assert handovers and all(e.reason.startswith("sector ") for e in handovers)
    span = {r.server_round: (r.start, r.end) for r in records}
    assert all(span[e.round][0] <= e.start <= span[e.round][1] for e in handovers)  # logged in the round they happened in
    assert len(handovers) == len(network.dynamics.motion.handovers)  # the last round's too
    out = [d for r in records for d, why in r.outcome.dropped.items() if why == "out-of-coverage"]
    assert out
    again, rng_again = system.bind(np.full(DEVICES, 100.0), np.random.SeedSequence(3))
    same, _ = simulate_rounds(plans, again, 1e6, np.random.default_rng(0), channel_rng=rng_again)
    assert [r.end for r in same] == [r.end for r in records]  # one seed, the same moving run


def test_the_report_is_the_channel_at_its_instant():
    network, channel_rng = _bind(speed_kmh=3.0)
    perfect = network.channel_report(channel_rng, 2.0)
    channel = network.draw_round(channel_rng, 2.0)
    np.testing.assert_array_equal(perfect.uplink_bps, np.where(channel.uplink_outage, 0.0, channel.uplink_bps))
    delayed, delayed_rng = _bind(speed_kmh=3.0, csi_delay_s=0.5)
    old = delayed.channel_report(delayed_rng, 2.5)  # the large-scale channel 0.5 s old, the round's block fading
    np.testing.assert_array_equal(old.uplink_bps, perfect.uplink_bps)
    doppler, doppler_rng = _bind(speed_kmh=3.0, fading_in_time="doppler", csi_delay_s=0.5)
    aged = doppler.channel_report(doppler_rng, 2.5)  # fading in time: the report's fading is that of its instant too
    then = doppler.draw_round(doppler_rng, 2.0)
    np.testing.assert_array_equal(aged.uplink_bps, np.where(then.uplink_outage, 0.0, then.uplink_bps))
    assert not np.array_equal(then.uplink_fade, doppler.draw_round(doppler_rng, 2.5).uplink_fade)


def test_the_fast_path_and_the_processes_agree_on_a_moving_cell():
    plans = _plans(5)
    ends = []
    for simulator in ("timeline", "processes"):
        network, channel_rng = _bind(speed_kmh=30.0)  # (with availability or batteries both run the processes)
        records, _ = simulate_rounds(plans, network, 1e5, np.random.default_rng(0), simulator=simulator, channel_rng=channel_rng)
        ends.append([(r.end, r.outcome.arrived, dict(r.outcome.dropped)) for r in records])
    assert ends[0] == ends[1]


@pytest.mark.parametrize("cell, radio", [("uma-3.5ghz", {}), ("umi-3.5ghz", {}), ("umi-3.5ghz", {"interference": False})])
def test_a_static_cell_and_a_crawling_one_share_their_channel(cell, radio):
    """Common random numbers: at 0.001 km/h the channel is the static cell's continued (the drop's
    LOS states, shadowing, O2I losses, association; the same block fading from the same stream),
    so the per-device mean SINR at t = 0 and the first round's end are the static cell's."""
    devices = 40
    runs = []
    for speed in (0.0, 0.001):
        system = get_cell_system(cell, overrides={**radio, "speed_kmh": speed})
        network, channel_rng = system.bind(np.full(devices, 100.0), np.random.SeedSequence(7))
        layout = network.layout if speed == 0 else network.dynamics.motion.at(0.0)[0]
        records, _ = simulate_rounds(_plans(1, devices), network, 1e6, np.random.default_rng(0), channel_rng=channel_rng)
        runs.append((system.mean_snr_db(layout), layout.sector, records[0].end))
    (static_snr, static_sector, static_end), (crawl_snr, crawl_sector, crawl_end) = runs
    np.testing.assert_allclose(crawl_snr[0], static_snr[0], atol=1e-3)  # dB: the moving path's antenna gains in single precision
    np.testing.assert_allclose(crawl_snr[1], static_snr[1], atol=1e-3)
    np.testing.assert_array_equal(crawl_sector, static_sector)
    assert crawl_end == pytest.approx(static_end, rel=0.01)


def test_the_association_runs_on_its_own_measurement_period_not_at_round_starts():
    """TS 38.133's 200 ms layer-1 period: the handovers are the same whatever the rounds' lengths
    (here 4 rounds of 2 Mbit against 40 rounds of 0.2 Mbit over the same minute), each at a
    measurement instant k x 200 ms, logged by the first round that starts after it."""
    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": 120.0})
    logged = []
    for rounds, bits in ((4, 2e6), (40, 2e5)):
        network, channel_rng = system.bind(np.full(DEVICES, 100.0), np.random.SeedSequence(3))
        records, trace = simulate_rounds(_plans(rounds, bits=bits), network, bits, np.random.default_rng(0), channel_rng=channel_rng)
        last_start = records[-1].end - (records[-1].end - records[-2].end)  # the last round's start: the end of the one before
        logged.append(([(e.start, e.entity, e.reason) for e in trace if e.kind == "handover"], last_start))
    (few, few_until), (many, many_until) = logged
    until = min(few_until, many_until)
    assert [h for h in few if h[0] <= until] == [h for h in many if h[0] <= until] and len(few) > 4
    assert all(abs(t / 0.2 - round(t / 0.2)) < 1e-9 for t, _, _ in few)


def test_doppler_fading_at_speed_0_is_one_draw_for_ever_and_block_fading_a_new_one_each_round():
    still, still_rng = _bind(fading_in_time="doppler")
    assert still.dynamics.motion is not None  # a cell in time at speed 0: its scatterers at rest
    first, later = still.draw_round(still_rng, 0.0), still.draw_round(still_rng, 500.0)
    np.testing.assert_array_equal(first.downlink_fade, later.downlink_fade)
    np.testing.assert_array_equal(first.network.layout.path_loss_db, later.network.layout.path_loss_db)
    block, block_rng = _bind()
    assert not np.array_equal(block.draw_round(block_rng).downlink_fade, block.draw_round(block_rng).downlink_fade)
