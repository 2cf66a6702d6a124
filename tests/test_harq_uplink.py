"""``link_abstraction=nr-harq``: the cell's TDMA uploads served by the NR link layer per transfer
(``netsim.radio.harq_uplink``): one upload through the cell by hand (MCS, TBS, BLER, HARQ
transmissions, wall-clock time and energy of its trace event), the outer loop carried across a
device's uploads, the grant's PRBs on its best subbands, the vectorized rounds equal to the SimPy
processes, determinism, a device's draws whatever other devices do, and every orchestrator."""

import dataclasses
import json
import os

import numpy as np
import pytest

from contract import RoundPlan, Stream
from contract.seeds import child, harq_downlink_seed, harq_seed
from netsim import simulate_rounds
from netsim.radio import harq_downlink, harq_uplink
from netsim.radio.cell import Cell, CellLayout
from netsim.radio.link.adaptation import block_error, grant
from netsim.radio.physical import LinkBudget, PhysicalSystem
from netsim.radio.physical_links import PhysicalLinks
from scenarios.cli.main import main
from scenarios.definitions.cells import get_cell_system
from tests.test_physical_timeline import random_round

BAND_HZ = 3.6e6  # 10 PRBs at 30 kHz: 3.6 MHz / (12 x 30 kHz)
P_DBM = 10 * np.log10(200.0)  # 0.2 W
NOISE_DBM = -174 + 10 * np.log10(BAND_HZ)  # noise figure 0


def one_device_cell(seed: int, snr_db: float = 9.5, **overrides):
    """One device at ``snr_db`` on every PRB of its whole-band grant (no fading), TDD DDDSU at 30 kHz."""
    system = PhysicalSystem(Cell(distances_m=(50.0,)), LinkBudget(BAND_HZ, 1.0, 0.0), LinkBudget(BAND_HZ, 0.2, 0.0), fading="none",
                            duplex="tdd", subcarrier_spacing_hz=30e3, link_abstraction="nr-harq", **overrides)
    layout = CellLayout(np.full(1, 50.0), np.zeros(1), np.zeros(1, dtype=bool), np.zeros(1), np.full(1, P_DBM - NOISE_DBM - snr_db))
    network = system.network(layout, np.zeros(1))
    return dataclasses.replace(network, link_state=harq_uplink.LinkState(harq_seed(np.random.SeedSequence(seed))))


def upload_round(bits, devices=(0,)):
    return RoundPlan((), {d: bits for d in devices}, tuple(devices))


def test_one_upload_through_the_cell_by_hand():
    """12,672 bits, one device at 9.5 dB on each of its 10 PRBs (whole band), 0.2 W, TDD DDDSU with
    10:2:2 special symbols at 30 kHz: uplink share (1 + 2/14) / 5 = 0.228571; run seed 48.

    Its first upload draws from child (device 0, upload 0) of the HARQ stream: 0.0336, 0.8973,
    0.6319, 0.3163, 0.0383.
    Block 1: offset 0, MCS 17 (64QAM, R 466/1024), TBS 4224; BLER at 9.5 dB 0.0663: 0.0336 < 0.0663,
      NACK (offset +0.5 dB); chase-combined retransmission at 2 x SINR (12.51 dB): BLER ~1e-22, 0.8973: ACK.
    Block 2: seen at 9.0 dB, MCS 15 (16QAM, 616), TBS 3752, BLER ~1e-15: 0.6319 ACK (offset 0.5 - 0.0556 = 0.4444).
    Block 3: seen at 9.0556 dB, MCS 16 (16QAM, 658), TBS 3968: 0.3163 ACK (offset 0.3889).
    Block 4: 12,672 - 4224 - 3752 - 3968 = 728 bits left; MCS 16, TBS 3968: 0.0383 ACK (offset 0.3333).
    Transmissions 2 + 1 + 1 + 1 = 5 slots of 0.5 ms; the retransmission 3 slots after block 1's
    first copy, between blocks 3 and 4: 5 uplink slots, 2.5 ms of the uplink's time, on the
    carrier 2.5 ms / 0.228571 = 10.9375 ms of wall clock (the trace event's length).
    Energy: 5 transmissions x 0.5 ms x 0.2 W = 0.5 mJ (radiated power, power_unit_w 0).
    Next upload (child (0, 1)): the loop starts at 0.3333 dB, seen 9.1667 dB: MCS 16, not a fresh loop's 17."""
    draws = np.random.default_rng(child(child(harq_seed(np.random.SeedSequence(48)), 0), 0)).random(5)
    np.testing.assert_allclose(draws, [0.0336, 0.8973, 0.6319, 0.3163, 0.0383], atol=5e-5)
    network = one_device_cell(48)
    assert network.system.uplink_prbs == 10 and network.system.shares[1] == pytest.approx(0.228571, abs=1e-6)
    sinr = np.full(10, 10 ** 0.95)
    assert block_error("pusch-tp-64qam", grant("pusch-tp-64qam", 17, 10), sinr) == pytest.approx(0.06628, abs=5e-6)
    records, trace = simulate_rounds([upload_round(12_672)], network, 0.0, np.random.default_rng(0), simulator="processes",
                                     channel_rng=np.random.default_rng(0))
    (up,) = [e for e in trace if e.kind == "uplink"]
    assert (up.entity, up.start, up.bits) == (0, 0.0, 12_672)
    assert up.end == pytest.approx(2.5e-3 / (8 / 35), rel=1e-12) == pytest.approx(10.9375e-3, rel=1e-12)
    assert up.energy_j == pytest.approx(0.5e-3, rel=1e-12)
    assert records[0].energy_j[0] == pytest.approx(0.5e-3, rel=1e-12) and records[0].end == up.end
    loop = network.link_state.loops[0]
    assert network.link_state.sent == {0: 1} and loop.offset_db == pytest.approx(0.5 - 3 * 0.5 / 9, rel=1e-12)
    # the library's own account of the same upload: blocks, MCS, TBS, transmissions
    again = harq_uplink.transfer(12_672, sinr, harq_uplink.LinkState(harq_seed(np.random.SeedSequence(48))), 0,
                                 harq_uplink.link_config(30e3), 0.2, 8 / 35, 0.0)
    assert again.result.mcs.tolist() == [17, 15, 16, 16] and again.result.tbs_bits.tolist() == [4224, 3752, 3968, 3968]
    assert again.result.transmissions.tolist() == [2, 1, 1, 1] and again.wall_s == up.end
    second = harq_uplink.transfer(12_672, sinr, network.link_state, 0, harq_uplink.link_config(30e3), 0.2, 8 / 35, 0.0)
    assert second.result.mcs[0] == 16


def test_the_device_states_charge_each_transmission_and_the_other_slots():
    """ue_energy=slots, power_unit_w 1 mW: each transmission at TR 38.840's PUSCH state for 0.2 W
    (``transmit_state_w``) for its 0.5 ms, the rest of the 10.9375 ms at PDCCH monitoring (100 units)."""
    network = one_device_cell(48, power_unit_w=1e-3, ue_energy="slots")
    _, trace = simulate_rounds([upload_round(12_672)], network, 0.0, np.random.default_rng(0), simulator="processes",
                               channel_rng=np.random.default_rng(0))
    (up,) = [e for e in trace if e.kind == "uplink"]
    state_w = float(network.transmit_state_w(0.2))
    assert up.energy_j == pytest.approx(state_w * 2.5e-3 + 0.1 * (10.9375e-3 - 2.5e-3), rel=1e-12)


def test_a_narrow_grant_sits_on_the_best_consecutive_prbs():
    """10 PRBs over 4 subbands: PRBs 0-2 in subband 0, 3-4 in 1, 5-7 in 2, 8-9 in 3 (floor(4 i / 10)).
    Fades 1, 4, 0.5, 3: a 2-PRB grant's best run is PRBs 3-4 (sum 8), a 4-PRB grant's 1-4 (1 + 1 + 4 + 4
    = 10, against 2-5's 9.5 and 6-9's 7); the whole band holds all; on equal fades the lowest start."""
    fade = np.array([1.0, 4.0, 0.5, 3.0])
    assert harq_uplink.grant_subbands(fade, 10, 2).tolist() == [1, 1]
    assert harq_uplink.grant_subbands(fade, 10, 4).tolist() == [0, 0, 1, 1]
    assert harq_uplink.grant_subbands(np.ones(4), 10, 3).tolist() == [0, 0, 0]
    assert harq_uplink.grant_subbands(fade, 10, 10).tolist() == [0, 0, 0, 1, 1, 2, 2, 2, 3, 3]
    np.testing.assert_allclose(harq_uplink.grant_sinr(10.0, fade, 10, 2), [40.0, 40.0])


def harq_version(network, seed):
    """``network`` under nr-harq with a fresh link state of ``seed`` (whole-band or headroom grants)."""
    system = network.system
    allocation = "whole-band" if system.ul_allocation == "power-limit" else system.ul_allocation
    system = dataclasses.replace(system, link_abstraction="nr-harq", ul_allocation=allocation, ul_power_control="off")
    return dataclasses.replace(network, system=system, link_state=harq_uplink.LinkState(harq_seed(np.random.SeedSequence(seed))),
                               stream_state=harq_downlink.HarqStreams(harq_downlink_seed(np.random.SeedSequence(seed))))


@pytest.mark.parametrize("mode", ["barrier", "pipelined"])
def test_vectorized_rounds_equal_the_processes_under_nr_harq(mode):
    """Randomized rounds (as tests/test_physical_timeline.py's, uploads of 10-20 kbit), two rounds
    each so the link state carries: the same outcome, round end, energies bit for bit and trace."""
    rng = np.random.default_rng(5 if mode == "barrier" else 6)
    uploads = 0
    for trial in range(12):
        deadline = None if trial % 3 == 0 else float(rng.uniform(0.05, 2.0))
        plan, network = random_round(rng, mode, deadline, "slots" if trial % 2 else "airtime")
        plan = dataclasses.replace(plan, uplink_bits={d: b / 10 for d, b in plan.uplink_bits.items()})
        runs = {}
        for simulator in ("timeline", "processes"):
            harq = harq_version(network, trial)
            runs[simulator] = simulate_rounds([plan, plan], harq, 1e5, np.random.default_rng(trial), simulator=simulator,
                                              channel_rng=np.random.default_rng(trial + 1000)), harq.link_state, harq.stream_state
        ((fast, fast_trace), fast_state, _), ((ref, ref_trace), ref_state, _) = runs["timeline"], runs["processes"]
        for a, b in zip(fast, ref):
            assert (a.start, a.end) == (b.start, b.end) and a.outcome == b.outcome and a.energy_j == b.energy_j
        assert sorted(fast_trace) == sorted(ref_trace)
        assert fast_state.sent == ref_state.sent and fast_state.loops == ref_state.loops
        assert runs["timeline"][2].heard == runs["processes"][2].heard
        uploads += sum(fast_state.sent.values())
    assert uploads > 20


def cell_network(devices, seed=0, mode="pipelined", **overrides):
    system = get_cell_system("umi-3.5ghz", mode, overrides={"link_abstraction": "nr-harq", **overrides})
    return system.bind(np.full(devices, 100.0), np.random.SeedSequence(seed))


def uploads_of(trace, device):
    return [(e.round, e.end - e.start, e.energy_j) for e in trace if e.kind == "uplink" and e.entity == device]


def test_same_seed_same_numbers_and_the_draws_differ_from_the_curve():
    """Two runs of one seed: the same records and trace; the uploads' times are not the nr curve's."""
    plans = [upload_round(2e5, range(6))] * 3
    runs = []
    for _ in range(2):
        network, channel_rng = cell_network(6)
        runs.append(simulate_rounds(plans, network, 1e5, np.random.default_rng(0), channel_rng=channel_rng))
    (first, first_trace), (second, second_trace) = runs
    assert [(r.end, r.energy_j) for r in first] == [(r.end, r.energy_j) for r in second] and first_trace == second_trace
    curve, channel_rng = get_cell_system("umi-3.5ghz", overrides={"link_abstraction": "nr"}).bind(np.full(6, 100.0),
                                                                                                   np.random.SeedSequence(0))
    _, curve_trace = simulate_rounds(plans, curve, 1e5, np.random.default_rng(0), channel_rng=channel_rng)
    assert uploads_of(first_trace, 0) and uploads_of(first_trace, 0) != uploads_of(curve_trace, 0)


def test_a_devices_uploads_do_not_depend_on_who_else_takes_part():
    """Device 0's uploads over 3 rounds (their wall-clock times and energies: its draws, its outer
    loop) are the same whether it uploads alone or with five others queueing at its receiver."""
    seen = []
    for devices in ((0,), tuple(range(6))):
        network, channel_rng = cell_network(6)
        _, trace = simulate_rounds([upload_round(2e5, devices)] * 3, network, 1e5, np.random.default_rng(0), channel_rng=channel_rng)
        seen.append((uploads_of(trace, 0), network.link_state.loops[0].offset_db))
    (alone, alone_offset), (shared, shared_offset) = seen
    assert len(alone) == 3 and alone_offset == shared_offset
    for (round_a, wall_a, joules_a), (round_b, wall_b, joules_b) in zip(alone, shared):
        assert round_a == round_b and wall_a == pytest.approx(wall_b, rel=1e-12) and joules_a == joules_b  # end - start: rounding


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("orchestration", [["--orchestrator", "sync"], ["--orchestrator", "fedbuff", "--buffer-k", "3", "--concurrency", "6"],
                                           ["--orchestrator", "fedasync"], ["--orchestrator", "fedat", "--tiers", "3"]],
                         ids=["sync", "fedbuff", "fedasync", "fedat"])
def test_every_orchestrator_runs_under_nr_harq_and_records_it(capsys, tmp_path, orchestration):
    code, out, err = run_cli(capsys, "run", "--algorithm", "fedavg", *orchestration, "--system", "umi-3.5ghz", "--rounds", "3",
                             "--radio", "link_abstraction=nr-harq", "--out", str(tmp_path), "--no-figure", "--json", "--quiet")
    assert code == 0, err
    run = json.loads(out)["runs"][0]
    folder = tmp_path / os.path.basename(run["result_dir"])
    assert json.loads((folder / "config.json").read_text())["system"]["link_abstraction"] == "nr-harq"
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["rounds"] == 3 and summary["transmit_energy_j"] > 0


@pytest.mark.parametrize("radio, needle", [
    ("subcarrier_spacing_hz=240000", "link_abstraction=nr-harq needs a subcarrier spacing of 15, 30, 60 or 120 kHz"),
])
def test_what_nr_harq_does_not_serve_is_refused_before_anything_runs(capsys, tmp_path, radio, needle):
    code, out, err = run_cli(capsys, "round-time", "--devices", "4", "--system", "umi-3.5ghz", "--radio", "link_abstraction=nr-harq",
                             "--radio", radio)
    assert code == 2 and out == "" and needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("radio", [{"mean_on_s": 3.0, "mean_off_s": 3.0}, {"battery_j": 0.05}, {"ue_energy": "slots"},
                                   {"fading_in_time": "doppler"}, {"ul_allocation": "power-limit", "ul_power_control": "fractional"},
                                   {"speed_kmh": 30.0}, {"speed_kmh": 120.0, "fading_in_time": "doppler"}],
                         ids=["availability", "batteries", "slots", "doppler", "power-limit", "moving", "moving-doppler"])
def test_the_cell_in_time_and_the_device_states_compose_each_upload_sent_moves_its_device_on_once(radio):
    """Availability, batteries, TR 38.840's states in every slot, Doppler fading, power-limit
    grants, a moving cell (uploads in segments, block or Doppler fading): the rounds run (SimPy
    processes where the cell is in time), and a device's link state counts exactly its uploads
    that went on the air (arrived, or cut mid-way: a drop with airtime)."""
    network, channel_rng = cell_network(8, seed=1, **radio)
    _, trace = simulate_rounds([upload_round(2e5, range(8))] * 4, network, 1e5, np.random.default_rng(1), channel_rng=channel_rng)
    on_air = {}
    for e in trace:
        if e.kind == "uplink" or (e.kind == "dropped" and e.end > e.start):
            on_air[e.entity] = on_air.get(e.entity, 0) + 1
    assert on_air and network.link_state.sent == on_air


def test_barrier_and_pipelined_rounds_give_each_device_the_same_uploads():
    """Common random numbers across the timing mode: the same fading per round and each device's
    k-th upload from child (device, k), so every device's uploads (wall-clock time, energy) and
    final outer loop agree; only when they happen differs."""
    seen = []
    for mode in ("barrier", "pipelined"):
        network, channel_rng = cell_network(6, mode=mode)
        _, trace = simulate_rounds([upload_round(2e5, range(6))] * 3, network, 1e5, np.random.default_rng(0), channel_rng=channel_rng)
        seen.append(({d: [(r, joules) for r, _, joules in uploads_of(trace, d)] for d in range(6)},
                     {d: loop.offset_db for d, loop in network.link_state.loops.items()}))
    assert seen[0] == seen[1] and sum(len(u) for u in seen[0][0].values()) >= 15


def steps_of(step_s, link_of):
    """A channel read every ``step_s`` from 0, ``link_of(k)`` in step ``k``."""
    return harq_uplink.Steps(lambda t_s: int(np.floor(t_s / step_s + 1e-9)), lambda k: k * step_s, link_of)


def test_an_upload_in_two_steps_by_hand():
    """Steps of 1.5 ms (3 uplink slots of 0.5 ms at mu 1, uplink share 1, off-slot power 0), 10 PRBs.
    Step 0 at 30 dB, 0.2 W: MCS 27 (TBS 8712, BLER 2e-30): slots 0, 1, 2 carry three blocks, ACKed
    (the top MCS: the offset stays 0). Step 1 at -8 dB, 0.1 W: MCS 0 (TBS 368; first copy BLER
    1 - 1e-8, two copies 1e-11): slots 3 and 4 the first copies of two blocks (26,872 - 3 x 8712 =
    736 = 2 x 368), NACKed (MCS 0: the offset stays 0), retransmitted 3 slots on, in slots 6 and 7
    (step 2, instants 3.0 and 3.5 ms), decoded there on their own step's SINRs.
    Step 2 as step 1: 8 slots, 4 ms; energy 3 x 0.5 ms x 0.2 W + 4 x 0.5 ms x 0.1 W = 0.5 mJ.
    Step 2 lost: cut at its start, 3.0 ms; the retransmissions not sent, the two MCS 0 blocks not
    delivered; 0.3 + 0.1 = 0.4 mJ; 26,136 bits through; the loop keeps its five first copies' feedback.
    A lost step between a block and its retransmission cuts the upload there too."""
    high, low = (np.full(10, 1e3), 0.2), (np.full(10, 10 ** -0.8), 0.1)
    link = harq_uplink.link_config(30e3)
    for lost in (False, True):
        state = harq_uplink.LinkState(harq_seed(np.random.SeedSequence(7)))
        steps = steps_of(1.5e-3, lambda k: high if k == 0 else (None if lost and k == 2 else low))
        sent = harq_uplink.transfer_in_steps(26_872, 0.0, steps, state, 0, link, 1.0, 0.0)
        done = sent.result
        assert done.mcs.tolist() == [27, 27, 27, 0, 0] and sent.loop_after.offset_db == 0.0 and state.count(0) == 0
        if not lost:
            assert done.transmissions.tolist() == [1, 1, 1, 2, 2] and done.delivered.all() and not done.lost
            assert sent.wall_s == pytest.approx(4e-3, rel=1e-12) and sent.energy_j == pytest.approx(0.5e-3, rel=1e-12)
        else:
            assert done.transmissions.tolist() == [1, 1, 1, 1, 1] and done.delivered.tolist() == [True] * 3 + [False] * 2 and done.lost
            assert sent.wall_s == pytest.approx(3e-3, rel=1e-12) and sent.energy_j == pytest.approx(0.4e-3, rel=1e-12)
            assert done.tbs_bits[done.delivered].sum() == 26_136
    # A lost step between blocks and their retransmissions: step 0 (slots 0-2) at -8 dB, three MCS 0
    # blocks NACKed, due again in slots 3-5: step 1, lost. Cut at 1.5 ms, no block delivered, no
    # block drawn after (step 2 is fine); 3 x 0.5 ms x 0.1 W = 0.15 mJ.
    state = harq_uplink.LinkState(harq_seed(np.random.SeedSequence(7)))
    sent = harq_uplink.transfer_in_steps(5_000, 0.0, steps_of(1.5e-3, lambda k: None if k == 1 else low), state, 0, link, 1.0, 0.0)
    done = sent.result
    assert done.mcs.tolist() == [0, 0, 0] and done.transmissions.tolist() == [1, 1, 1] and not done.delivered.any() and done.lost
    assert sent.wall_s == pytest.approx(1.5e-3, rel=1e-12) and sent.energy_j == pytest.approx(0.15e-3, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_an_upload_in_steps_of_one_channel_is_the_static_upload(seed):
    """Every step the same grant SINRs and power: the same blocks, MCS, draws, time and energy as ``transfer``."""
    rng = np.random.default_rng(seed)
    sinr = 10 ** (rng.uniform(-2, 14, 12) / 10)
    link, share = harq_uplink.link_config(30e3), 8 / 35
    states = [harq_uplink.LinkState(harq_seed(np.random.SeedSequence(seed))) for _ in range(2)]
    static = harq_uplink.transfer(300_000, sinr, states[0], 3, link, 0.25, share, 0.05)
    stepped = harq_uplink.transfer_in_steps(300_000, 0.123, steps_of(0.01, lambda k: (sinr, 0.25)), states[1], 3, link, share, 0.05)
    assert static.wall_s > 0.05  # it spans several steps
    for field in ("mcs", "tbs_bits", "transmissions", "delivered", "first_bler"):
        assert getattr(static.result, field).tolist() == getattr(stepped.result, field).tolist()
    assert (static.wall_s, static.energy_j, static.loop_after) == (stepped.wall_s, stepped.energy_j, stepped.loop_after)


def test_on_a_moving_cell_an_upload_within_its_first_step_is_the_static_one_and_runs_repeat():
    """30 km/h: each device's upload from the links' start that ends within the first 200 ms step
    equals ``harq_transfer`` on the links' channel; two runs of one seed give the same trace and link state."""
    network, channel_rng = cell_network(6, seed=3, speed_kmh=30.0)
    links = PhysicalLinks.draw(network, channel_rng, 0.0)
    assert links.segmented
    compared = 0
    for device in range(6):
        if not links.can_upload(device, True):
            continue
        static = links.harq_transfer(device, 2e4)
        moving = links.upload(device, 2e4, 0.0)
        if static.wall_s < 0.2:
            assert (moving.airtime_s, moving.lost, moving.bits) == (static.wall_s, False, 2e4)
            assert links._pending[device].result.mcs.tolist() == static.result.mcs.tolist()
            compared += 1
    assert compared >= 2
    runs = []
    for _ in range(2):
        network, channel_rng = cell_network(6, seed=3, speed_kmh=30.0)
        _, trace = simulate_rounds([upload_round(2e5, range(6))] * 3, network, 1e5, np.random.default_rng(0), channel_rng=channel_rng)
        runs.append((trace, dict(network.link_state.sent), {d: loop.offset_db for d, loop in network.link_state.loops.items()}))
    assert runs[0] == runs[1] and sum(runs[0][1].values()) > 6


def test_the_expected_upload_rate_by_hand():
    """The same device at 9.5 dB on its 10 PRBs, the outer loop at its start: MCS 17, TBS 4224,
    BLER 0.06628 on the first copy, ~1e-22 on two combined: E[T] = 1.06628 transmissions, none lost;
    4224 / 1.06628 bits a 0.5 ms uplink slot on the uplink's 8/35 of the time:
    4224 / 1.06628 / 0.5e-3 x 8/35 = 1.81094 Mbit/s. ``fl-cosim cell``'s uplink figures under nr-harq."""
    network = one_device_cell(48)
    channel = network.draw_round(np.random.default_rng(0))
    p1 = block_error("pusch-tp-64qam", grant("pusch-tp-64qam", 17, 10), np.full(10, 10 ** 0.95))
    by_hand = 4224 / (1 + p1) / 0.5e-3 * 8 / 35
    assert by_hand == pytest.approx(1.81094e6, rel=1e-5)
    assert harq_uplink.expected_bps(np.full(10, 10 ** 0.95), harq_uplink.link_config(30e3), 8 / 35) == pytest.approx(by_hand, rel=1e-12)
    assert channel.harq_uplink_bps[0] == pytest.approx(by_hand, rel=1e-12)
    # in outage (MCS 0 misses the target after four copies at -14 dB, not at -12 dB): no rate
    link = harq_uplink.link_config(30e3)
    assert harq_uplink.in_outage(np.full(10, 10 ** -1.4), link) and not harq_uplink.in_outage(np.full(10, 10 ** -1.2), link)
    assert harq_uplink.expected_bps(np.full(10, 10 ** -1.4), link, 8 / 35) == 0.0 < harq_uplink.expected_bps(np.full(10, 10 ** -1.2), link, 8 / 35)


def test_the_cell_report_gives_the_link_layers_uplink_rates_under_nr_harq():
    """``fl-cosim cell`` under nr-harq: each device's uplink Mbit/s is the mean over the rounds of its
    expected upload rate on its grant (``RoundChannel.harq_uplink_bps``), its downlink Mbit/s that of
    a stream to it alone (``harq_downlink_bps``), the broadcast that of a stream to all
    (``harq_broadcast_bps``), not the nr curve's; the report says so."""
    from scenarios.reports.cell import cell_draws, describe_cell

    harq = describe_cell("umi-3.5ghz", 0, 4, {"link_abstraction": "nr-harq"}, 20)
    curve = describe_cell("umi-3.5ghz", 0, 4, {"link_abstraction": "nr"}, 20)
    _, _, _, channels = cell_draws("umi-3.5ghz", 0, 4, {"link_abstraction": "nr-harq"}, 20)
    for d, (row, other) in enumerate(zip(harq["device_table"], curve["device_table"])):
        assert row["uplink_mbps"] == pytest.approx(np.mean([c.harq_uplink_bps[d] for c in channels]) / 1e6, rel=1e-12)
        assert row["uplink_mbps"] != pytest.approx(other["uplink_mbps"], rel=1e-3)
        assert row["downlink_mbps"] == pytest.approx(np.mean([c.harq_downlink_bps[d] for c in channels]) / 1e6, rel=1e-12)
        assert row["downlink_mbps"] != pytest.approx(other["downlink_mbps"], rel=1e-3)
    np.testing.assert_array_equal(harq["_draws"]["uplink_bps"], [c.harq_uplink_bps for c in channels])
    np.testing.assert_array_equal(harq["_draws"]["broadcast_bps"], [c.harq_broadcast_bps for c in channels])
    assert harq["summary"]["mean_broadcast_downlink_s_per_mbit"] == pytest.approx(
        np.mean([1e6 / c.harq_broadcast_bps for c in channels]), rel=1e-12)
    assert harq["uplink_rates"].startswith("nr-harq: each round's expected upload rate at the grant's EESM MCS")
    assert harq["downlink_rates"].startswith("nr-harq: each round's expected stream rate on the whole band")
    assert "uplink_rates" not in curve and "downlink_rates" not in curve
