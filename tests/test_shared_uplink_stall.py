"""The shared uplink's stall rule (``netsim.transport.shared_uplink``): a transmitter whose rate is
0 at the current allocation is not scheduled (it holds its bits, radiates nothing, interferes
with no one), the allocation recomputed without it one device at a time, and it is evaluated
again at every change; its time stalled is charged as a grant wait with data pending."""

import numpy as np
import pytest
import simpy

from contract import RoundPlan, Stream
from netsim import simulate_rounds
from netsim.transport.shared_uplink import SharedUplink
from scenarios.cli.main import main
from scenarios.definitions.cells import get_cell_system
from tests.shannon_link import SHANNON_SHARED


def interfering(silenced_by: dict[int, set], rate_bps: float = 10.0):
    """Rates on two receivers (device d at receiver d): ``rate_bps`` each, 0 for a device while
    one it is ``silenced_by`` transmits (the clock's interference pushing it below the floor)."""
    def rates_bps(devices, sharing):
        on = set(np.asarray(devices).tolist())
        return np.array([0.0 if silenced_by.get(d, set()) & on else rate_bps for d in np.asarray(devices).tolist()])
    return rates_bps


def run(rates_bps, sends, until=100.0):
    """``sends``: (device, bits, at_s); returns each device's (end, energy) and the uplink."""
    env = simpy.Environment()
    uplink = SharedUplink(env, rates_bps, lambda devices, sharing: np.ones(len(devices)), capacity=5, receivers=[0, 1, 2])
    ends = {}

    def send(device, bits, at_s):
        yield env.timeout(at_s)
        joules = yield uplink.transmit(device, bits)
        ends[device] = (env.now, joules)

    for device, bits, at_s in sends:
        env.process(send(device, bits, at_s))
    env.run(until=until)
    return ends, uplink


def test_a_device_pushed_to_0_stalls_and_resumes_when_its_interferer_ends():
    """Device 1 has no rate while device 0 transmits. Both start at 0: 1 stalls (no power), 0
    sends 20 bits at 10 bit/s to 2 s; then 1 sends its 10 bits from 2 to 3 s, 1 J (1 W for 1 s),
    and its 2 s stalled are counted in ``held_s``."""
    ends, uplink = run(interfering({1: {0}}), [(0, 20.0, 0.0), (1, 10.0, 0.0)])
    assert ends == {0: (pytest.approx(2.0, rel=1e-12), pytest.approx(2.0, rel=1e-12)),
                    1: (pytest.approx(3.0, rel=1e-12), pytest.approx(1.0, rel=1e-12))}
    assert uplink.held_s == {1: pytest.approx(2.0, rel=1e-12)}


def test_a_device_stalls_mid_upload_when_an_interferer_starts_and_resumes_at_its_end():
    """Device 1 alone from 0 s sends 5 of its 10 bits by 0.5 s; device 0 starts then (10 bits, to
    1.5 s) and 1 stalls; 1 resumes at 1.5 s and ends at 2.0 s."""
    ends, uplink = run(interfering({1: {0}}), [(1, 10.0, 0.0), (0, 10.0, 0.5)])
    assert ends[0][0] == pytest.approx(1.5, rel=1e-12) and ends[1][0] == pytest.approx(2.0, rel=1e-12)
    assert ends[1][1] == pytest.approx(1.0, rel=1e-12) and uplink.held_s == {1: pytest.approx(1.0, rel=1e-12)}


def test_two_devices_at_0_only_through_each_other_do_not_deadlock():
    """Each has no rate while the other transmits. Dropping every device at 0 at once would stall
    both for ever; one at a time, the last arrival (1) stalls and 0 sends alone: 0 ends at 1 s, 1
    at 2 s."""
    ends, uplink = run(interfering({0: {1}, 1: {0}}), [(0, 10.0, 0.0), (1, 10.0, 0.0)])
    assert ends[0][0] == pytest.approx(1.0, rel=1e-12) and ends[1][0] == pytest.approx(2.0, rel=1e-12)


def test_the_fixed_point_drops_one_device_a_pass_and_keeps_the_others_shares():
    """Three devices: 2 is silenced by 0. 1 and 0 send throughout; 2 waits for 0's end."""
    ends, uplink = run(interfering({2: {0}}), [(0, 10.0, 0.0), (1, 30.0, 0.0), (2, 10.0, 0.0)])
    assert [ends[d][0] for d in range(3)] == pytest.approx([1.0, 3.0, 2.0], rel=1e-12)


def test_a_device_with_no_rate_alone_loses_its_link_there():
    """FDMA on the ``nr`` curve: device 0 has 10 bit/s on half the band but none alone on all of it
    (its power spread below the lowest CQI). Both start at 0 s; 1 sends its 10 bits by 1 s, and
    0, alone with 10 of its 20 bits through, loses its link there (``lost``; 1 J spent at 1 W),
    rather than wait for ever."""
    def widened(devices, sharing):
        devices = np.asarray(devices).tolist()
        return np.array([0.0 if d == 0 and len(devices) == 1 else 10.0 for d in devices])
    ends, uplink = run(widened, [(0, 20.0, 0.0), (1, 10.0, 0.0)])
    assert ends == {0: (pytest.approx(1.0, rel=1e-12), pytest.approx(1.0, rel=1e-12)),
                    1: (pytest.approx(1.0, rel=1e-12), pytest.approx(1.0, rel=1e-12))}
    assert uplink.lost == {0: pytest.approx(10.0, rel=1e-12)} and not uplink.remaining


def _clock_round(radio, devices=12, seed=5, rounds=1, bits=4e6):
    system = get_cell_system("umi-3.5ghz", overrides={"ul_interference": "clock", "uplink_queues": "sector", **radio})
    network, channel_rng = system.bind(np.full(devices, 100.0), np.random.SeedSequence(seed))
    every = tuple(range(devices))
    plans = [RoundPlan((Stream(every, 1e5),), {d: bits for d in every}, every) for _ in range(rounds)]
    return simulate_rounds(plans, network, bits, np.random.default_rng(0), simulator="processes", channel_rng=channel_rng)


@pytest.mark.parametrize("radio", [{"uplink_access": "pf", "link_abstraction": "nr-harq"},
                                   {"uplink_access": "fdma", "link_abstraction": "nr-harq"},
                                   {"uplink_access": "pf", "link_abstraction": "nr-harq", "speed_kmh": 30.0},
                                   {"uplink_access": "fdma", "link_abstraction": "nr-harq", "ue_energy": "slots",
                                    "power_unit_w": 0.001}],
                         ids=["nr-harq-pf", "nr-harq-fdma", "nr-harq-pf-moving", "nr-harq-fdma-slots"])
def test_clock_rounds_with_the_stall_rule_end_count_everything_once_and_are_deterministic(radio):
    records, trace = _clock_round(radio)
    for record in records:
        outcome = record.outcome
        assert set(outcome.arrived) | set(outcome.dropped) == set(range(12)) and outcome.arrived
        events = [e for e in trace if e.round == record.server_round]
        assert sum(record.energy_j.values()) == pytest.approx(sum(e.energy_j for e in events if e.kind != "downlink"), rel=1e-9)
    assert _clock_round(radio)[1] == trace


def test_a_umi_clock_round_holds_a_device_the_interference_pushes_below_the_floor(monkeypatch):
    """PF on the clock, Shannon, 30 devices (seed 1): a device is stalled for a while (a rate of 0
    over an interval of the clock, that time in ``held_s``), resumes and arrives; the round still
    counts every device once."""
    held, checked = {}, []
    advance = SharedUplink._advance

    def watching(uplink):
        for device, (rate, _) in (uplink._rates().items() if uplink.remaining and uplink.env.now > uplink.updated_at else []):
            if rate <= 0:
                checked.append(device)
        advance(uplink)
        held.update(uplink.held_s)

    monkeypatch.setattr(SharedUplink, "_advance", watching)
    records, trace = _clock_round({"uplink_access": "pf", **SHANNON_SHARED}, devices=30, seed=1)
    assert held and all(h > 0 for h in held.values()) and set(checked) == set(held)
    outcome = records[0].outcome
    assert set(outcome.arrived) | set(outcome.dropped) == set(range(30)) and set(held) <= set(outcome.arrived)


def test_nr_harq_under_the_clock_interference_runs_on_the_command_line(capsys):
    code = main(["round-time", "--devices", "6", "--rounds", "3", "--system", "umi-3.5ghz", "--radio", "link_abstraction=nr-harq",
                 "--radio", "uplink_access=pf", "--radio", "ul_interference=clock", "--radio", "uplink_queues=sector", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err


def test_a_clock_rate_is_0_where_the_interference_brings_it_below_the_floor_and_only_there():
    """Flat links at the UE power (1 W) over 2 MHz, noise -111.0 dBm (no noise figure), floor 1
    bit/s/Hz (0 dB). At 90 dB the SNR is 51.0 dB: with interference 10^6 times the noise the
    SINR is -9.0 dB, below the floor: rate 0; with 10^3 times, 21.0 dB: its Shannon rate. At 145
    dB the SNR is -4.0 dB, below the floor without interference: it keeps its rate (as FDMA's
    widened share does off the clock), so no device alone has a rate of 0."""
    from netsim.radio import link_budget
    from netsim.radio.cell import Cell, CellLayout
    from netsim.radio.physical import LinkBudget, PhysicalSystem

    system = PhysicalSystem(Cell(distances_m=(50.0, 50.0)), LinkBudget(2e6, 1.0, 0.0), LinkBudget(2e6, 1.0, 0.0), fading="none",
                            uplink_access="fdma", min_bps_per_hz=1.0)
    layout = CellLayout(np.full(2, 50.0), np.zeros(2), np.ones(2, bool), np.zeros(2), np.array([90.0, 145.0]))
    network = system.network(layout, np.zeros(2))
    channel = network.draw_round(np.random.default_rng(1))
    noise_w = link_budget.dbm_to_w(link_budget.noise_power_dbm(2e6, 0.0))
    devices, sharing = np.array([0, 1]), np.array([2.0, 2.0])
    for times, first_zero in [(1e6, True), (1e3, False)]:
        interference = np.full(2, times * noise_w)
        rates = channel.uplink_share_bps(devices, sharing, interference)
        sinr_db = channel.uplink_share_snr_db(devices, sharing, interference)
        shannon = 1e6 * np.log2(1 + 10 ** (sinr_db / 10))  # 1 MHz each
        assert (rates[0] == 0.0) == first_zero and rates[1] == pytest.approx(shannon[1], rel=1e-9) and rates[1] > 0
        if not first_zero:
            assert rates[0] == pytest.approx(shannon[0], rel=1e-9)
    assert channel.uplink_share_snr_db(devices, sharing)[0] == pytest.approx(30.0 - 90.0 + 174.0 - 10 * np.log10(2e6)
                                                                             + 10 * np.log10(2.0), abs=0.01)


def test_the_stalled_devices_are_those_set_aside_now():
    """At 1 s device 1 is stalled behind device 0 (both started at 0 s); at 2.5 s, 0 having ended
    at 2 s, nobody is."""
    ends, uplink = run(interfering({1: {0}}), [(0, 20.0, 0.0), (1, 10.0, 0.0)], until=1.0)
    assert uplink.stalled == [1] and not ends
    ends, uplink = run(interfering({1: {0}}), [(0, 20.0, 0.0), (1, 10.0, 0.0)], until=2.5)
    assert uplink.stalled == [] and list(ends) == [0]


@pytest.mark.parametrize("ue_energy, units", [("slots", 100.0), ("airtime", 20.0)])
def test_time_stalled_is_charged_as_a_grant_wait_not_as_airtime(ue_energy, units):
    """An upload of 3 s wall clock, 2 of them stalled, that drew 0.5 W s: its transmit energy
    (the uplink's share of 0.5 W s), the off-direction slots of its 1 s on the band under slots,
    and its 2 s stalled at TR 38.840's PDCCH monitoring (100 units) under slots, at the waiting
    power (light sleep, 20 units) otherwise."""
    from netsim.radio.physical_links import PhysicalLinks

    system = get_cell_system("umi-3.5ghz", overrides={"uplink_access": "fdma", "power_unit_w": 0.001, "ue_energy": ue_energy})
    network, channel_rng = system.bind(np.full(4, 100.0), np.random.SeedSequence(1))
    links = PhysicalLinks.draw(network, channel_rng)
    assert system.duplex == "tdd"
    off_j = network.upload_off_j(1.0) if ue_energy == "slots" else 0.0
    assert (ue_energy == "slots") == (off_j > 0)
    assert links.upload_j(0.5, 3.0, 2.0) == pytest.approx(network.upload_j(0.5) + off_j + 2.0 * units * 0.001, rel=1e-12)
    assert links.upload_j(0.5, 3.0) == pytest.approx(network.upload_j(0.5) + 3.0 * off_j, rel=1e-12)
