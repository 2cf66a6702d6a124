"""The vectorized physical round (TDMA) against the per-device SimPy processes on randomized
rounds (one uplink queue, or one per serving sector or site, the sectors of other sites too as
``coverage=network`` serves a moving cell's devices; whole-band, headroom or power-limit grants, which
share a queue's resource blocks; ``ue_energy`` airtime or slots): same outcome, round end, per-device energies and bits sent,
bit for bit, and the same trace events."""

import numpy as np
import pytest

from contract import RoundPlan, Stream
from netsim import simulate_rounds
from netsim.radio.cell import Cell, CellLayout
from netsim.radio.physical import LinkBudget, PhysicalSystem


def random_round(rng, mode, deadline, ue_energy="airtime"):
    n = int(rng.integers(1, 40))
    snr_db = rng.uniform(-15.0, 25.0, n)
    loss = 30.0 + 114.0 - snr_db
    sector = rng.integers(0, 3, n) if rng.random() < 0.7 else None  # the site's three receivers (their own uplink queues)
    allocation = str(rng.choice(["whole-band", "headroom", "power-limit"]))  # power-limit: sized by the open-loop power
    # coverage=network on a moving cell: devices served by the sectors of other sites too (3 site + sector: their own queues)
    site = rng.integers(0, 3, n) if sector is not None and rng.random() < 0.5 else None
    layout = CellLayout(np.full(n, 50.0), np.zeros(n), rng.random(n) < 0.5, np.zeros(n), loss, rng.uniform(0.0, 10.0, n),
                        sector=sector, site=site)
    system = PhysicalSystem(
        Cell(distances_m=(50.0,) * n), LinkBudget(1e6, 1.0, 0.0), LinkBudget(1e6, 0.2, float(rng.uniform(0, 10))),
        fading=str(rng.choice(["ricean", "rayleigh", "none"])), subbands=int(rng.integers(1, 4)),
        duplex=str(rng.choice(["tdd", "fdd"])), min_bps_per_hz=0.1523, max_bps_per_hz=5.5547,
        snr_gap_db=float(rng.choice([0.0, 3.0])), cycles_per_sample=1e4, cpu_hz=1e9, kappa=1e-28,
        compute_extra_s=float(rng.choice([0.0, 0.3])), receive_power_w=0.1, mode=mode, deadline=deadline,
        power_unit_w=(unit := float(rng.choice([0.0, 1e-3]))), ue_energy=ue_energy if unit else "airtime", uplink_queues=str(rng.choice(["sector", "site"])),
        ul_allocation=allocation, ul_power_control="fractional" if allocation == "power-limit" else "off",
    )
    samples = rng.choice([0.0, 100.0, 3000.0], n)
    network = system.network(layout, samples)
    participants = tuple(int(d) for d in rng.permutation(n)[: int(rng.integers(1, n + 1))])
    streams = []
    for _ in range(int(rng.integers(0, 6))):
        members = tuple(int(d) for d in rng.choice(n, int(rng.integers(1, n + 1)), replace=False))
        streams.append(Stream(members, float(rng.choice([0.0, 1e5, 3e5]))))
    uplink_bits = {d: float(rng.choice([0.0, 1e5, 2e5])) for d in participants}
    scale = {d: 2.0 for d in participants if rng.random() < 0.2}
    return RoundPlan(tuple(streams), uplink_bits, participants, scale), network


@pytest.mark.parametrize("mode", ["barrier", "pipelined"])
def test_vectorized_physical_round_equals_the_processes(mode):
    rng = np.random.default_rng(17 if mode == "barrier" else 18)
    packed = 0  # uploads that started while another of their queue was on the air (headroom grants side by side)
    for trial in range(120):
        deadline = None if trial % 3 == 0 else float(rng.uniform(0.05, 2.0))
        plan, network = random_round(rng, mode, deadline, "slots" if trial % 2 else "airtime")  # slots: off-direction slots, grant waits
        plans = [plan, plan]
        runs = {}
        for simulator in ("timeline", "processes"):
            records, trace = simulate_rounds(plans, network, 1e5, np.random.default_rng(trial), simulator=simulator,
                                             channel_rng=np.random.default_rng(trial + 1000))
            runs[simulator] = (records, trace)
        (fast, fast_trace), (ref, ref_trace) = runs["timeline"], runs["processes"]
        for a, b in zip(fast, ref):
            assert (a.start, a.end) == (b.start, b.end)
            assert a.outcome == b.outcome
            assert a.energy_j == b.energy_j  # exact: the same sums in the same order
            assert a.downlink_bits == b.downlink_bits and a.uplink_bits == b.uplink_bits
        assert sorted(fast_trace) == sorted(ref_trace)
        ups = [e for e in fast_trace if e.kind == "uplink"]
        queue = network.uplink_queue
        packed += sum(1 for a in ups for b in ups if (a.round, queue[a.entity]) == (b.round, queue[b.entity]) and a.start < b.start < a.end)
    assert packed > 0


@pytest.mark.parametrize("queues", ["sector", "site"])
def test_vectorized_round_equals_the_processes_on_a_moving_network_with_every_site_serving(queues):
    """coverage=network (the default of a moving cell): devices wander over the 19 sites, each
    queueing at the sector (or site) serving it at the round's start. Whole-band grants: two
    uploads on the air at once are at two receivers, so one pair of the same orientation at two
    sites is what the centre's one queue per orientation never let happen."""
    from scenarios.definitions.cells import get_cell_system

    system = get_cell_system("uma-3.5ghz", overrides={"speed_kmh": 120.0, "uplink_queues": queues, "ul_allocation": "whole-band"})
    devices, bits = 12, 2e5
    every = tuple(range(devices))
    plans = [RoundPlan((Stream(every, bits),), {d: bits for d in every}, every) for _ in range(30)]
    runs = {}
    for simulator in ("timeline", "processes"):
        network, channel_rng = system.bind(np.full(devices, 100.0), np.random.SeedSequence(3))
        runs[simulator] = simulate_rounds(plans, network, 1e6, np.random.default_rng(0), simulator=simulator, channel_rng=channel_rng)
    (fast, fast_trace), (ref, ref_trace) = runs["timeline"], runs["processes"]
    for a, b in zip(fast, ref):
        assert (a.start, a.end) == (b.start, b.end) and a.outcome == b.outcome and a.energy_j == b.energy_j
    assert sorted(fast_trace) == sorted(ref_trace)
    motion = network.dynamics.motion
    start = {r.server_round: r.start for r in fast}
    ups = [(e, motion.serving_at(start[e.round])[e.entity]) for e in fast_trace if e.kind == "uplink"]
    assert any(sector // 3 != 0 for _, sector in ups)  # served by another site
    across = [(a, b) for a, sa in ups for b, sb in ups
              if a.round == b.round and a.start < b.start < a.end and sa % 3 == sb % 3 and sa // 3 != sb // 3]
    assert across  # same orientation, two sites, on the air together
    if queues == "site":  # one queue per site: never two of one site at once
        assert not any(a.round == b.round and a.start < b.start < a.end and sa // 3 == sb // 3 for a, sa in ups for b, sb in ups)
