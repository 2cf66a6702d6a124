"""Uplink interference on the clock (``ul_interference=clock``, issue 58 item 3): one shared
uplink serves every receiver, and at each start or end anywhere every transmitter's SINR is
recomputed with the power received from the devices transmitting at the other receivers, faded;
hand-computed SINRs and SimPy event times, no interference when nobody else transmits, the bits
and joules counted once, determinism, full-buffer's draws untouched, and the refusals."""

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from contract import RoundPlan
from contract.seeds import RunSeeds, interference_seed
from netsim import simulate_rounds
from netsim.radio.cell import Cell, CellLayout
from netsim.radio.physical import LinkBudget, PhysicalSystem
from scenarios.cli.main import main
from scenarios.definitions.cells import get_cell_system
from tests.shannon_link import SHANNON_SHARED, SHANNON_SHARED_ARGS

NOISE_W = 10 ** ((-174 + 10 * math.log10(2e6)) / 10) / 1e3  # 2 MHz, no noise figure: -110.99 dBm
POWER_W = 10 ** (25 / 10) / 1e3  # 90 dB: 15 dBm per block (P0 -30 + 0.5 x 90) on the 10 blocks: 25 dBm
SIGNAL_W = POWER_W * 1e-9  # through its own sector's 90 dB
CROSS_DB = -125.0  # each device's gain to the other sector
FADES = np.random.default_rng(7).exponential(1.0, (2, 3))  # the round's fading to every receiver (interference_rng)


def rate_bps(interference_w=0.0):
    """Alone on its sector's 10 blocks (1.8 MHz occupied), no cap: 1.8 MHz log2(1 + S / (N + I))."""
    return 0.9 * 2e6 * math.log2(1 + SIGNAL_W / (NOISE_W + interference_w))


def two_sectors(mode="clock", sectors=(0, 1), access="pf"):
    """Two devices at 90 dB from their own sectors (``sectors``) of the centre site, -125 dB to
    the other's; FDD, 2 MHz (10 blocks of 180 kHz), P_CMAX 30 dBm, no noise figure, no fading of
    the wanted links, no rate cap; open-loop power P0 -30 dBm per block, alpha 0.5 (headroom: 31
    blocks, above the band: each alone takes the whole band at 25 dBm)."""
    system = PhysicalSystem(Cell(interference=True), LinkBudget(2e6, 1.0, 0.0), LinkBudget(2e6, 1.0, 0.0), fading="none",
                            bandwidth_occupancy=0.9, subcarrier_spacing_hz=15e3, uplink_access=access, mode="barrier",
                            ul_power_control="fractional", p0_dbm_per_prb=-30.0, alpha=0.5, ul_interference=mode)
    gain = np.full((2, 3), CROSS_DB)
    gain[0, sectors[0]] = gain[1, sectors[1]] = -90.0
    layout = CellLayout(np.full(2, 50.0), np.zeros(2), np.ones(2, bool), np.zeros(2), np.full(2, 90.0), bs_gain_db=np.zeros(2),
                        sector=np.array(sectors), receiver_gain_db=gain)
    network = system.network(layout, np.zeros(2))
    return dataclasses.replace(network, interference_rng=np.random.default_rng(7))


def uploads(network, bits):
    plan = RoundPlan((), dict(enumerate(bits)), tuple(range(len(bits))))
    records, trace = simulate_rounds([plan], network, 1e6, np.random.default_rng(0), simulator="processes",
                                     channel_rng=np.random.default_rng(1))
    return records[0], {e.entity: e for e in trace if e.kind == "uplink"}, trace


def test_an_upload_speeds_up_at_the_instant_the_other_sectors_transmitter_finishes():
    """Both start at 0 s, each alone on its sector's band at 25 dBm. While both send, device 0
    hears device 1 at 25 dBm - 125 dB times its fade to sector 0 (and device 1 device 0 likewise):
    device 1's 2 Mbit end at ``t1 = 2e6 / r1``; from then device 0 has no interference and runs at
    ``1.8 MHz log2(1 + S / N)``: its 4 Mbit end at ``t1 + (4e6 - r0 t1) / r_alone``. Energy: 25 dBm
    for each one's airtime (the power does not depend on the interference)."""
    interference_at_0 = POWER_W * 10 ** (CROSS_DB / 10) * FADES[1, 0]
    interference_at_1 = POWER_W * 10 ** (CROSS_DB / 10) * FADES[0, 1]
    r0, r1, alone = rate_bps(interference_at_0), rate_bps(interference_at_1), rate_bps()
    t1 = 2e6 / r1
    t0 = t1 + (4e6 - r0 * t1) / alone
    assert t1 < 4e6 / r0  # device 1 is the first to end
    record, ups, trace = uploads(two_sectors(), [4e6, 2e6])
    assert (ups[1].start, ups[1].end) == (0.0, pytest.approx(t1, rel=1e-12))
    assert (ups[0].start, ups[0].end) == (0.0, pytest.approx(t0, rel=1e-12))
    assert ups[0].energy_j == pytest.approx(POWER_W * t0, rel=1e-12)
    assert ups[1].energy_j == pytest.approx(POWER_W * t1, rel=1e-12)
    # bits and joules once: one event per upload, the round's energy the sum of the events'
    assert sorted(e.bits for e in trace if e.kind == "uplink") == [2e6, 4e6]
    assert sum(record.energy_j.values()) == pytest.approx(sum(e.energy_j for e in trace), rel=1e-12)
    # under full-buffer this hand layout has no interferer: both at the noise-only rate, device 0 unhurried
    _, ups_fb, _ = uploads(two_sectors("full-buffer"), [4e6, 2e6])
    assert ups_fb[0].end == pytest.approx(4e6 / alone, rel=1e-12) and ups_fb[1].end == pytest.approx(2e6 / alone, rel=1e-12)
    assert ups[0].end > ups_fb[0].end


def test_nobody_transmitting_at_another_sector_is_no_interference():
    """One device alone, or both on the same sector (sharing its band, PF: 5 blocks each at
    22 dBm, the same SNR): no interference, whatever the gains to the other sector."""
    _, ups, _ = uploads(two_sectors(), [4e6, 0.0])
    assert ups[0].end == pytest.approx(4e6 / rate_bps(), rel=1e-12)
    _, ups, _ = uploads(two_sectors(sectors=(0, 0)), [2e6, 2e6])
    half = rate_bps() / 2  # 5 blocks each, 22 dBm: the same SNR on half the band
    assert [ups[d].end for d in (0, 1)] == [pytest.approx(2e6 / half, rel=1e-12)] * 2


def test_fdma_on_the_clock_is_the_same_shared_uplink():
    """FDMA (the equal policy) on the hand layout: each alone on its sector, so the same rates and
    event times as PF's."""
    _, pf, _ = uploads(two_sectors(), [4e6, 2e6])
    _, fdma, _ = uploads(two_sectors(access="fdma"), [4e6, 2e6])
    assert [fdma[d].end for d in (0, 1)] == pytest.approx([pf[d].end for d in (0, 1)], rel=1e-12)


DEVICES = 24


def _uma(mode, seed=3, rounds=2, deadline=None, **radio):
    system = get_cell_system("uma-3.5ghz", mode="barrier", deadline=deadline,
                             overrides={"uplink_access": "pf", **SHANNON_SHARED, "ul_interference": mode, **radio})
    network, fading_rng = system.bind(np.zeros(DEVICES), RunSeeds.of(seed).network)
    plan = RoundPlan((), {d: 1e6 for d in range(DEVICES)}, tuple(range(DEVICES)))
    return simulate_rounds([plan] * rounds, network, 1e6, np.random.default_rng(seed), simulator="processes",
                           channel_rng=fading_rng)


def test_clock_rounds_count_everything_once_and_repeat():
    """24 UMa devices on the centre site's three sectors, two rounds: everyone arrives or is
    dropped with a reason, each upload's bits on one event, each round's energy the sum of its
    events'; the same seed gives the same trace; the run draws its interference fading from
    its own stream (``interference_seed``)."""
    records, trace = _uma("clock")
    for record in records:
        outcome = record.outcome
        assert set(outcome.arrived) | set(outcome.dropped) == set(range(DEVICES))
        events = [e for e in trace if e.round == record.server_round]
        assert sorted(e.entity for e in events if e.kind == "uplink") == sorted(outcome.arrived)
        assert all(e.bits == 1e6 for e in events if e.kind == "uplink")
        assert sum(record.energy_j.values()) == pytest.approx(sum(e.energy_j for e in events), rel=1e-9)
    assert _uma("clock")[1] == trace
    assert interference_seed(RunSeeds.of(3).network).spawn_key == (2, 0, 6)


@pytest.mark.parametrize("setting", [{"deadline": 3.0}, {"mean_off_s": 30.0}, {"battery_j": 0.5}, {"uplink_access": "fdma"},
                                     {"speed_kmh": 30.0}, {"speed_kmh": 30.0, "coverage": "site"},
                                     {"speed_kmh": 120.0, "fading_in_time": "doppler", "min_bps_per_hz": 1.0}])
def test_clock_rounds_compose_with_a_deadline_availability_batteries_fdma_and_a_moving_cell(setting):
    """Cut by a deadline, by switching off or by a battery, FDMA's equal shares, or a moving cell
    (every device's gains to every receiver read at each step; coverage of the network or of the
    centre site; a link lost mid-upload): everyone arrives or is dropped with a reason, the bits
    of an upload on one event, each round's energy the sum of its events'."""
    records, trace = _uma("clock", **setting)
    for record in records:
        outcome = record.outcome
        assert set(outcome.arrived) | set(outcome.dropped) == set(range(DEVICES))
        assert not set(outcome.arrived) & set(outcome.dropped)
        events = [e for e in trace if e.round == record.server_round]
        assert all(e.bits == 1e6 for e in events if e.kind == "uplink")
        assert all(e.bits < 1e6 for e in events if e.kind == "dropped")
        assert sum(record.energy_j.values()) == pytest.approx(sum(e.energy_j for e in events), rel=1e-9)
    if "deadline" in setting:
        assert "deadline" in records[0].outcome.dropped.values()


def test_a_clock_run_on_the_command_line_records_its_interference(capsys, tmp_path):
    import json

    code = main(["run", "--system", "uma-3.5ghz", "--radio", "uplink_access=pf", "--radio", "ul_interference=clock", *SHANNON_SHARED_ARGS,
                 "--algorithm", "fedavg", "--rounds", "1", "--mode", "barrier", "--out", str(tmp_path), "--json", "--no-figure"])
    out, err = capsys.readouterr()
    assert code == 0, err
    run = json.loads(out)["runs"][0]
    config = json.load(open(f"{run['result_dir']}/config.json"))
    assert config["system"]["ul_interference"] == "clock"


def test_interference_on_the_clock_is_below_the_full_buffer_one_here_and_full_buffer_draws_are_untouched():
    """At 24 devices the three sectors' own uploads interfere less than a loaded network's 54
    full-buffer interferers: every upload that both settings carry ends no later on average.
    And the full-buffer run is the one it was: binding a clock run leaves the layout and the
    wanted links' fading of the same seed alone (common random numbers)."""
    _, clock = _uma("clock", rounds=1)
    _, full = _uma("full-buffer", rounds=1)
    ends_clock = {e.entity: e.end for e in clock if e.kind == "uplink"}
    ends_full = {e.entity: e.end for e in full if e.kind == "uplink"}
    both = sorted(set(ends_clock) & set(ends_full))
    assert both and np.mean([ends_clock[d] for d in both]) < np.mean([ends_full[d] for d in both])
    systems = [get_cell_system("uma-3.5ghz", overrides={"uplink_access": "pf", **SHANNON_SHARED, "ul_interference": m}) for m in ("clock", "full-buffer")]
    (net_c, rng_c), (net_f, rng_f) = (s.bind(np.zeros(DEVICES), RunSeeds.of(3).network) for s in systems)
    assert np.array_equal(net_c.layout.path_loss_db, net_f.layout.path_loss_db)
    assert np.array_equal(rng_c.random(5), rng_f.random(5))
    assert net_f.interference_rng is None and net_c.interference_rng is not None


def test_the_layout_keeps_every_devices_gain_to_every_receiver():
    """``receiver_gain_db``: devices x 57 sectors; a device's column of its own serving sector is
    its serving coupling gain (the coupling loss with the antennas' gains, negated)."""
    system = get_cell_system("uma-3.5ghz")
    network, _ = system.bind(np.zeros(50), RunSeeds.of(0).network)
    gain = network.layout.receiver_gain_db
    assert gain.shape == (50, 57)
    rows = np.arange(50)
    own = gain[rows, network.uplink_queue]
    assert np.allclose(own + system.ue_antenna_gain_dbi, -network.coupling_loss_db, rtol=0, atol=1e-9)
    assert np.array_equal(np.argmax(gain, axis=1), network.uplink_queue)  # served by its strongest sector


@pytest.mark.parametrize("radio, words", [
    (["ul_interference=clock"], "radio ul_interference has an effect only with uplink_access fdma or pf"),
    (["ul_interference=clock", "uplink_access=pf", "interference=off"], "ul_interference has an effect only with interference"),
    (["ul_interference=clock", "uplink_access=pf", "uplink_queues=site", "link_abstraction=nr"],
     "ul_interference=clock takes each sector as a receiver"),
    (["ul_interference=sometimes", "uplink_access=pf"], "ul_interference"),
])
def test_clock_interference_is_refused_where_it_has_no_effect_or_no_model(radio, words, capsys, tmp_path, monkeypatch):
    """One line, exit 2, nothing written, before training."""
    monkeypatch.chdir(tmp_path)
    args = ["run", "--out", "out", "--system", "uma-3.5ghz", "--rounds", "1"]
    for item in radio:
        args += ["--radio", item]
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert words in err
    assert not Path("out").exists()


def test_a_system_built_in_code_refuses_clock_interference_off_the_shared_uplink():
    with pytest.raises(ValueError, match="it needs uplink_access=pf or fdma"):
        PhysicalSystem(Cell(interference=True), LinkBudget(2e6, 1.0, 0.0), LinkBudget(2e6, 1.0, 0.0), ul_interference="clock")
    with pytest.raises(ValueError, match="it needs interference=on"):
        PhysicalSystem(Cell(), LinkBudget(2e6, 1.0, 0.0), LinkBudget(2e6, 1.0, 0.0), uplink_access="fdma", ul_interference="clock")


def test_a_moving_cell_reads_every_gain_at_each_step_only_on_the_clock():
    """A moving layout of an instant keeps the devices' gains to the 57 sectors under ``clock``
    (its own serving sector's the device's coupling gain then), and not under ``full-buffer``
    (a step's layout is cached for the round: 57 columns per device and step only where read)."""
    layouts = {}
    for mode in ("clock", "full-buffer"):
        system = get_cell_system("uma-3.5ghz", overrides={"uplink_access": "pf", **SHANNON_SHARED, "ul_interference": mode, "speed_kmh": 30.0})
        network, _ = system.bind(np.zeros(DEVICES), RunSeeds.of(3).network)
        layouts[mode] = network.dynamics.motion.at(1.0)[0]
        moved = dataclasses.replace(network, layout=layouts[mode])
        if mode == "clock":
            gain = layouts[mode].receiver_gain_db
            assert gain.shape == (DEVICES, 57)
            own = gain[np.arange(DEVICES), moved.uplink_queue]
            assert np.allclose(own + system.ue_antenna_gain_dbi, -moved.coupling_loss_db, rtol=0, atol=1e-9)
    assert layouts["full-buffer"].receiver_gain_db is None
    assert np.array_equal(layouts["clock"].x_m, layouts["full-buffer"].x_m)


def test_fedbuff_with_k_c_n_under_clock_interference_is_the_synchronous_pipelined_run_on_one_shared_uplink():
    """K = C = N on 24 UMa devices under ``ul_interference=clock``: the buffered run keeps one
    shared uplink for every receiver for the run (``BufferedRun.shared_uplink``), and each
    version (one broadcast, aggregated at the last arrival) is the synchronous pipelined round
    of the same seeds, event for event: the same interference between the sectors' uploads."""
    from contract import Stream
    from netsim.clock.buffered import Buffered, BufferedRun, NetworkOnly, drive
    from netsim.clock.engine import RunOptions

    def bound():
        system = get_cell_system("uma-3.5ghz", mode="pipelined", overrides={"uplink_access": "pf", **SHANNON_SHARED, "ul_interference": "clock"})
        return system.bind(np.zeros(DEVICES), RunSeeds.of(3).network)

    network, fading_rng = bound()
    plan = RoundPlan((Stream(tuple(range(DEVICES)), 1e6),), {d: 1e6 for d in range(DEVICES)}, tuple(range(DEVICES)))
    rounds, synchronous = simulate_rounds([plan] * 2, network, 1e6, np.random.default_rng(3), simulator="processes",
                                          channel_rng=fading_rng)
    network, fading_rng = bound()
    run = BufferedRun.start(NetworkOnly(DEVICES, 1e6), network, Buffered(DEVICES), 2, np.random.default_rng(3),
                            RunOptions(channel_rng=fading_rng))
    versions, trace = drive(run)
    assert list(run.receivers) == ["every"] and len(set(network.uplink_queue.tolist())) == 3
    steps = lambda t: [(e.kind, e.entity, e.start, e.end, e.bits, e.energy_j, e.reason) for e in t
                       if e.kind in ("compute", "uplink", "dropped")]
    assert steps(trace) == steps(synchronous) and any(e.kind == "uplink" for e in trace)
    assert [(v.start, v.end) for v in versions[1:]] == [(r.start, r.end) for r in rounds]
    for version, record in zip(versions[1:], rounds):  # (the waiting summed per interval: equal up to rounding)
        assert version.energy_j == pytest.approx(record.energy_j, rel=1e-12)
