"""Exact event times of the SimPy round with fixed durations (reliable devices, inv_mu = 0)."""

import numpy as np
import pytest

from contract import RoundPlan, Stream
from netsim import NetworkSystem, simulate_rounds

MODEL = 100.0


def plan(streams, devices, uplink=MODEL, scale=None):
    return RoundPlan(tuple(Stream(tuple(s), MODEL) for s in streams), {d: uplink for d in devices}, tuple(devices), scale or {})


def events(trace, kind):
    return [(e.entity, e.start, e.end) for e in trace if e.kind == kind]


def run(plans, **system):
    return simulate_rounds(plans, NetworkSystem(**system), MODEL, np.random.default_rng(0))


def test_barrier_round_is_downlink_then_compute_then_uplink():
    records, trace = run([plan([[0, 1], [2]], [0, 1, 2])], rho=2, t_min=3, inv_mu=0, mode="barrier")
    assert events(trace, "downlink") == [(0, 0, 1), (1, 1, 2)]
    assert events(trace, "compute") == [(0, 2, 5), (1, 2, 5), (2, 2, 5)]
    assert events(trace, "uplink") == [(0, 5, 7), (1, 7, 9), (2, 9, 11)]
    assert records[0].end == 11 == 1 * (2 + 2 * 3) + 3
    assert records[0].arrived == (0, 1, 2)


def test_pipelined_device_computes_when_its_stream_arrives_and_queues_for_uplink():
    records, trace = run([plan([[0], [1], [2]], [0, 1, 2])], rho=2, t_min=1.5, inv_mu=0, mode="pipelined")
    assert events(trace, "compute") == [(0, 1, 2.5), (1, 2, 3.5), (2, 3, 4.5)]
    assert events(trace, "uplink") == [(0, 2.5, 4.5), (1, 4.5, 6.5), (2, 6.5, 8.5)]
    assert records[0].end == 8.5


def test_device_on_two_streams_waits_for_the_last():
    _, trace = run([plan([[0, 1], [1]], [0, 1], uplink=0.0)], rho=1, t_min=1, inv_mu=0)
    assert events(trace, "compute") == [(0, 1, 2), (1, 2, 3)]


def test_payload_scales_time_and_rounds_follow_each_other():
    half = RoundPlan((Stream((0,), MODEL / 2),), {0: MODEL * 2}, (0,))
    records, trace = run([half, half], rho=3, t_min=1, inv_mu=0)
    assert events(trace, "uplink") == [(0, 1.5, 7.5), (0, 9.0, 15.0)]
    assert [(r.start, r.end) for r in records] == [(0, 7.5), (7.5, 15.0)]


def test_no_communication_costs_compute_only_and_compute_scale_multiplies():
    records, trace = run([plan([], [0, 1], uplink=0.0, scale={1: 3.0})], rho=4, t_min=2, inv_mu=0)
    assert events(trace, "compute") == [(0, 0, 2), (1, 0, 6)]
    assert events(trace, "uplink") == []
    assert records[0].end == 6 and records[0].downlink_bits == 0 and records[0].uplink_bits == 0


def test_deadline_drops_late_uploads_and_the_round_waits_for_it():
    # uploads would end at 3, 5, 7: with deadline 6 the third is dropped, the round ends at 6
    records, trace = run([plan([[0, 1, 2]], [0, 1, 2])], rho=2, t_min=0, inv_mu=0, mode="barrier", deadline=6)
    assert records[0].arrived == (0, 1)
    assert events(trace, "dropped") == [(2, 5, 5)]
    assert records[0].end == 6
    assert records[0].uplink_bits == 2 * MODEL


def test_deadline_drops_devices_still_computing():
    slow = plan([[0, 1]], [0, 1], scale={1: 10.0})
    records, trace = run([slow], rho=1, t_min=1, inv_mu=0, deadline=4)
    assert records[0].arrived == (0,)
    assert events(trace, "compute") == [(0, 1, 2), (1, 1, 4)]
    assert events(trace, "dropped") == [(1, 4, 4)]
    assert records[0].end == 4


@pytest.mark.parametrize("bad", [dict(rho=0), dict(rho=-1), dict(t_min=-1), dict(inv_mu=-0.5), dict(mode="eager"), dict(deadline=0)])
def test_impossible_systems_are_refused(bad):
    with pytest.raises(ValueError):
        NetworkSystem(**{**dict(rho=2, t_min=1, inv_mu=0), **bad})


@pytest.mark.parametrize("end, energy_j, needle", [(float("nan"), None, "time that is not a finite number"),
                                                   (1.0, {0: 0.5, 3: float("nan")}, "device 3's energy is not a finite number"),
                                                   (1.0, {0: float("inf")}, "device 0's energy")])
def test_a_round_record_refuses_a_time_or_an_energy_that_is_not_a_number(end, energy_j, needle):
    """A nan from the network model stops the run at its round, not in a results column."""
    from netsim.clock.engine import RoundRecord

    with pytest.raises(RuntimeError, match=needle):
        RoundRecord(4, 0.0, end, 0.0, 0.0, 0, (), None, energy_j=energy_j)
    assert RoundRecord(4, 0.0, 1.0, 0.0, 0.0, 0, (), None, energy_j={0: 0.5}).duration == 1.0
