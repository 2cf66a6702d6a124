"""The vectorized round timeline against the per-device SimPy processes (the reference): same
arrivals, same round ends and the same trace in the same order, bit for bit, on the same draws;
plus hand-computed traces where SimPy's tie order decides, and the exact FIFO queue."""

from dataclasses import dataclass

import json

import numpy as np
import pytest
import simpy

from contract import RoundPlan, Stream
from netsim import NetworkSystem, RunOptions, run_cosimulation, simulate_rounds
from netsim.transport.durations import RoundDurations
from netsim.transport.hold import hold_until
from netsim.transport.fifo import fifo_with_deadline, lindley
from netsim.transport.timeline import ARRIVED, DROPPED_COMPUTING, DROPPED_UPLINK, round_timeline
from scenarios.cli.main import main
from tests.tiny_learners import build, scalar_data

MODEL = 4.0


def both(plans, system, seed=0, model_bits=MODEL):
    fast = simulate_rounds(plans, system, model_bits, np.random.default_rng(seed), simulator="timeline")
    reference = simulate_rounds(plans, system, model_bits, np.random.default_rng(seed), simulator="processes")
    return fast, reference


def assert_same(fast, reference):
    """Same rounds (start, end, arrivals) and the same trace, event for event, exactly."""
    assert [(r.start, r.end, r.arrived) for r in fast[0]] == [(r.start, r.end, r.arrived) for r in reference[0]]
    assert [tuple(e) for e in fast[1]] == [tuple(e) for e in reference[1]]


def kinds(trace):
    return [(e.kind, e.entity) for e in trace]


# ---------------------------------------------------------------- hand-computed traces

def test_same_time_events_follow_simpy_order_pipelined():
    # t_dl = 1, rho = 1, compute 1. Stream 0 -> device 0 at 1, stream 1 -> device 1 at 2.
    # At t=2 stream 1 ends before device 0's compute (stream 1's timeout was created before
    # device 0 started computing); at t=3 device 1's compute ends before device 0's upload
    # (device 1 started on stream 1's end, which came before device 0's grant at t=2).
    plan = RoundPlan((Stream((0,), MODEL), Stream((1,), MODEL)), {0: MODEL, 1: MODEL}, (0, 1))
    fast, reference = both([plan], NetworkSystem(rho=1, t_min=1, inv_mu=0))
    assert kinds(fast[1]) == [("downlink", 0), ("downlink", 1), ("compute", 0), ("compute", 1), ("uplink", 0), ("uplink", 1)]
    assert [(e.start, e.end) for e in fast[1]] == [(0, 1), (1, 2), (1, 2), (2, 3), (2, 3), (3, 4)]
    assert_same(fast, reference)


@pytest.mark.parametrize("mode,expected", [("pipelined", [0, 1, 2]), ("barrier", [2, 0, 1])])
def test_equal_compute_ends_queue_in_stream_order_pipelined_and_participant_order_barrier(mode, expected):
    # pipelined: arrivals are triggered in the stream's order; barrier: every device resumes
    # when the downlink process ends, in the order the devices' processes were started
    plan = RoundPlan((Stream((0, 1, 2), MODEL),), {d: MODEL for d in range(3)}, (2, 0, 1))
    fast, reference = both([plan], NetworkSystem(rho=1, t_min=1, inv_mu=0, mode=mode))
    assert [e.entity for e in fast[1] if e.kind == "compute"] == expected
    uploads = [(e.entity, e.start, e.end) for e in fast[1] if e.kind == "uplink"]
    assert uploads == [(expected[0], 2, 3), (expected[1], 3, 4), (expected[2], 4, 5)]
    assert_same(fast, reference)


def test_compute_ending_at_the_deadline_is_kept_and_its_late_upload_dropped_at_the_head():
    plan = RoundPlan((Stream((0, 1), MODEL),), {0: MODEL, 1: 0.0}, (0, 1))
    fast, reference = both([plan], NetworkSystem(rho=1, t_min=1, inv_mu=0, deadline=2))
    assert kinds(fast[1]) == [("downlink", 0), ("compute", 0), ("compute", 1), ("dropped", 0)]
    assert [(e.start, e.end) for e in fast[1]] == [(0, 1), (1, 2), (1, 2), (2, 2)]
    assert fast[0][0].arrived == (1,) and fast[0][0].end == 2  # device 1 sends nothing: it arrives
    assert_same(fast, reference)


def test_barrier_waits_for_the_whole_downlink_even_off_stream_and_drops_a_late_upload_at_the_head():
    # device 2 listens to nothing: pipelined it would start at 0; barrier makes it wait until 2.
    # Everyone has computed at 4; device 0 uploads 4-5, device 2 would end at 6 > 5: dropped at 5;
    # device 1 sends nothing and arrives.
    plan = RoundPlan((Stream((0,), MODEL), Stream((1,), MODEL)), {0: MODEL, 2: MODEL}, (0, 1, 2), {1: 2.0})
    fast, reference = both([plan], NetworkSystem(rho=1, t_min=1, inv_mu=0, mode="barrier", deadline=5))
    assert [(e.entity, e.start, e.end) for e in fast[1] if e.kind == "compute"] == [(0, 2, 3), (2, 2, 3), (1, 2, 4)]
    assert [(e.kind, e.entity, e.start, e.end) for e in fast[1][-2:]] == [("uplink", 0, 4, 5), ("dropped", 2, 5, 5)]
    assert fast[0][0].arrived == (0, 1) and fast[0][0].end == 5
    assert_same(fast, reference)


def test_timeline_reports_why_each_device_was_dropped():
    plan = RoundPlan((Stream((0, 1, 2, 3), MODEL),), {0: MODEL, 1: MODEL, 2: MODEL, 3: 0.0}, (0, 1, 2, 3), {1: 5.0})
    durations = NetworkSystem(rho=2, t_min=1, inv_mu=0).round_durations(plan, MODEL, np.random.default_rng(0))
    timeline = round_timeline(plan, durations, 10.0, "pipelined", 5.5)
    # model at 11, computes end at 12 (device 1: 16, cut at 15.5); uploads 12-14, then 14-16 > 15.5
    assert timeline.received.tolist() == [11, 11, 11, 11]
    assert timeline.computed.tolist() == [12, 15.5, 12, 12]
    assert timeline.status.tolist() == [ARRIVED, DROPPED_COMPUTING, DROPPED_UPLINK, ARRIVED]
    assert (timeline.uplink_start[[0, 2]].tolist(), timeline.uplink_end[[0, 2]].tolist()) == ([12, 14], [14, 14])
    assert timeline.end == 15.5 and timeline.arrived(plan) == (0, 3)


# ---------------------------------------------------------------- randomized equivalence

def random_plan(rng, pool_max, grid):
    pool = int(rng.integers(1, pool_max))
    participants = tuple(int(d) for d in rng.permutation(pool)[: int(rng.integers(0, pool + 1))])
    sizes = [0, 1, 2, 4] if grid else None

    def bits():
        return float(rng.choice(sizes)) if grid else float(rng.choice([0.0, rng.uniform(0.1, 8)]))

    streams = tuple(Stream(tuple(int(d) for d in rng.permutation(pool)[: int(rng.integers(0, pool + 1))]), bits())
                    for _ in range(int(rng.integers(0, 5))))
    uplink = {d: bits() for d in participants if rng.random() < 0.9}  # absent: sends nothing
    scale = {d: float(rng.choice([0, 0.5, 1, 2])) for d in participants if rng.random() < 0.4}
    return RoundPlan(streams, uplink, participants, scale)


def random_system(rng, grid):
    deadline = None if rng.random() < 0.4 else (float(rng.choice([0.25, 0.5, 1, 1.5, 2, 3, 4, 6])) if grid
                                                 else float(rng.uniform(0.5, 12)))
    return NetworkSystem(rho=float(rng.choice([0.25, 0.5, 1, 2, 4])), t_min=float(rng.choice([0, 0.25, 0.5, 1])),
                         inv_mu=0.0 if grid else float(rng.choice([0.0, 1.0])),
                         mode=str(rng.choice(["barrier", "pipelined"])), deadline=deadline)


@pytest.mark.parametrize("grid", [True, False], ids=["ties-on-a-grid", "continuous"])
@pytest.mark.parametrize("block", range(4))
def test_timeline_equals_reference_on_random_rounds(grid, block):
    """Unequal and overlapping streams, devices on no stream, devices on streams that are not
    participants, zero-bit streams and uploads, compute scales (0 included), both modes, with
    and without deadline, several rounds in a row (rounds not starting at 0)."""
    for case in range(100 * block, 100 * (block + 1)):
        rng = np.random.default_rng([case, grid])
        plans = [random_plan(rng, 25, grid) for _ in range(int(rng.integers(1, 4)))]
        system = random_system(rng, grid)
        assert_same(*both(plans, system, seed=case, model_bits=MODEL if grid else 3.0))


@pytest.mark.parametrize("mode", ["barrier", "pipelined"])
@pytest.mark.parametrize("deadline", [None, 300.0])
def test_timeline_equals_reference_at_scale(mode, deadline):
    """1,500 devices of wireless-slow-ul: a broadcast round, then five multicast groups."""
    n = 1500
    devices = tuple(range(n))
    broadcast = RoundPlan((Stream(devices, 1.0),), {d: 1.0 for d in devices}, devices)
    groups = RoundPlan(tuple(Stream(devices[g::5], 1.0) for g in range(5)), {d: 1.0 for d in devices}, devices[::-1])
    system = NetworkSystem(rho=4, t_min=1, inv_mu=1, mode=mode, deadline=deadline)
    fast, reference = both([broadcast, groups], system, model_bits=1.0)
    assert_same(fast, reference)
    if deadline is not None:
        assert 0 < len(fast[0][0].arrived) < n


def test_a_system_can_supply_its_own_durations():
    """Any object with mode, deadline and round_durations drives both engines the same way:
    here a stream takes its bits over its weakest listener's rate, uploads their own rates."""

    @dataclass(frozen=True)
    class RatedSystem:
        rate_bps: tuple
        mode: str = "pipelined"
        deadline: float | None = None

        def round_durations(self, plan, model_bits, rng):
            rate = np.array(self.rate_bps)
            return RoundDurations(
                stream_s=np.array([s.bits / rate[list(s.devices)].min() if s.devices else 0.0 for s in plan.streams]),
                compute_s=rng.exponential(1.0, len(plan.participants)),
                uplink_s=np.array([plan.uplink_bits.get(d, 0.0) / rate[d] for d in plan.participants]),
            )

    plan = RoundPlan((Stream((0, 1, 2), 8.0), Stream((3, 4), 8.0)), {d: 8.0 for d in range(5)}, (0, 1, 2, 3, 4))
    for mode in ("pipelined", "barrier"):
        fast, reference = both([plan, plan], RatedSystem((1.0, 4.0, 2.0, 8.0, 2.0), mode, 9.0))
        assert [(e.start, e.end) for e in fast[1] if e.kind == "downlink" and e.round == 0] == [(0, 8.0), (8.0, 12.0)]
        assert_same(fast, reference)


@pytest.mark.parametrize("name", ["fedavg", "user-centric"])
def test_cosimulation_is_the_same_on_both_simulators(name):
    """The round loop with a learner: same records (times, arrivals, so the same learning) and
    trace; the deadline drops some devices in some rounds."""
    data = scalar_data([[1.0, 2.0], [3.0], [5.0, 6.0, 7.0], [0.0], [4.0, 4.0]])
    system = NetworkSystem(rho=2, t_min=0.5, inv_mu=1, deadline=9.0)
    runs = [run_cosimulation(build(name, data), system, 4, np.random.default_rng(11), RunOptions(simulator=simulator))
            for simulator in ("timeline", "processes")]
    (records, trace), (reference_records, reference_trace) = runs
    assert [(r.start, r.end, r.arrived) for r in records] == [(r.start, r.end, r.arrived) for r in reference_records]
    assert any(0 < len(r.arrived) < 5 for r in records[1:])
    assert [r.evaluation.loss.tolist() for r in records] == [r.evaluation.loss.tolist() for r in reference_records]
    assert trace == reference_trace


# ---------------------------------------------------------------- the FIFO queue, exactly

def sequential_queue(ready, airtime, deadline_at=None):
    """The recursion one request at a time, as the clock adds."""
    free, out = -np.inf, []
    for r, a in zip(ready.tolist(), airtime.tolist()):
        start = r if r > free else free
        sent = deadline_at is None or start + a <= deadline_at
        free = start + a if sent else start
        out.append((start, free, sent))
    return [list(x) for x in zip(*out)] if out else [[], [], []]


def test_fifo_is_bit_exact_where_the_cumulative_sum_misplaces_a_busy_period():
    # the closed form S_k + max(ready_j - S_{j-1}) says request 2 finds the uplink free;
    # added one by one, request 1 ends at 326.86600000000004 > 326.866: it waits
    ready = np.array([326.2, 326.2866428493771, 326.866, 327.3009555383356, 327.3009555383356, 327.7353139825781])
    airtime = np.array([0.321, 0.345, 0.461, 0.079, 0.426, 0.222])
    served = np.cumsum(airtime)
    closed_form = served + np.maximum.accumulate(ready - (served - airtime))
    exact = sequential_queue(ready, airtime)[1]
    assert closed_form[1] <= ready[2] < exact[1]
    assert lindley(ready, airtime).tolist() == exact


def test_fifo_with_deadline_matches_one_at_a_time_on_random_queues():
    rng = np.random.default_rng(7)
    for case in range(400):
        n = int(rng.integers(0, 700))
        if case % 2:
            ready = np.sort(rng.integers(0, 40, n)).astype(float)
            airtime = rng.integers(1, 5, n).astype(float)
        else:
            ready = np.sort(rng.exponential(1.0, n)).cumsum() * rng.uniform(0.01, 2) + rng.uniform(0, 1e4)
            airtime = rng.exponential(0.5, n)
        deadline_at = None if case % 3 == 0 else float(ready[n // 2] + rng.uniform(0, 30)) if n else 1.0
        got = fifo_with_deadline(ready, airtime, deadline_at)
        assert [g.tolist() for g in got] == sequential_queue(ready, airtime, deadline_at)


# ---------------------------------------------------------------- the round process

def test_the_clock_lands_exactly_on_the_round_end_even_when_now_plus_delay_misses_it():
    now, end = 0.612822541868357, 3.6354280342681027
    assert now + (end - now) != end
    env = simpy.Environment()

    def go():
        yield env.timeout(now)
        yield from hold_until(env, end)

    env.process(go())
    env.run()
    assert env.now == end


def test_durations_come_from_the_system_in_one_place():
    plan = RoundPlan((Stream((0, 1), 50.0), Stream((1,), 100.0)), {0: 100.0, 1: 25.0}, (1, 0, 2), {0: 3.0})
    system = NetworkSystem(rho=4, t_min=1, inv_mu=2, t_dl=0.5)
    durations = system.round_durations(plan, 100.0, np.random.default_rng(5))
    draws = system.compute.sample(np.random.default_rng(5), 3)  # drawn in participant order
    assert durations.stream_s.tolist() == [0.25, 0.5]
    assert durations.compute_s.tolist() == [draws[0], draws[1] * 3.0, draws[2]]
    assert durations.uplink_s.tolist() == [0.5, 2.0, 0.0]


@pytest.mark.parametrize("bad_plan,message", [
    (RoundPlan((), {}, (1, 2, 1)), "takes part twice"),
    (RoundPlan((Stream((0, 1, 0), 1.0),), {}, (0, 1)), "lists a device twice"),
])
def test_malformed_plans_are_refused(bad_plan, message):
    with pytest.raises(ValueError, match=message):
        simulate_rounds([bad_plan], NetworkSystem(rho=1, t_min=1, inv_mu=0), 1.0, np.random.default_rng(0))


@pytest.mark.parametrize("stream_s,compute_s,uplink_s,message", [
    ([-1.0], [1.0], [1.0], "stream_s must be finite and >= 0"),
    ([1.0], [np.nan], [1.0], "compute_s must be finite and >= 0"),
    ([1.0], [1.0, 2.0], [1.0], "2 compute times for 1 uplink"),
])
def test_impossible_durations_are_refused(stream_s, compute_s, uplink_s, message):
    with pytest.raises(ValueError, match=message):
        RoundDurations(np.array(stream_s), np.array(compute_s), np.array(uplink_s))


def test_unknown_simulator_is_refused():
    with pytest.raises(ValueError, match="unknown simulator 'eager'"):
        simulate_rounds([], NetworkSystem(rho=1, t_min=1, inv_mu=0), 1.0, np.random.default_rng(0), simulator="eager")


def test_rounds_without_trace_keep_the_same_times():
    plan = RoundPlan((Stream(tuple(range(50)), 1.0),), {d: 1.0 for d in range(50)}, tuple(range(50)))
    system = NetworkSystem(rho=4, t_min=1, inv_mu=1)
    with_trace, trace = simulate_rounds([plan] * 3, system, 1.0, np.random.default_rng(3))
    without, none = simulate_rounds([plan] * 3, system, 1.0, np.random.default_rng(3), keep_trace=False)
    assert [r.end for r in with_trace] == [r.end for r in without] and len(trace) == 3 * 101 and none == []


def test_round_time_command_takes_ten_thousand_devices(capsys):
    # reliable devices, barrier: every round lasts exactly M + rho N + T_min = 10 + 40000 + 1
    code = main(["round-time", "--devices", "10000", "--streams", "10", "--rho", "4", "--t-min", "1", "--inv-mu", "0",
                 "--rounds", "3", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["simulated_mean"] == data["closed_form"] == 40011.0 and data["simulated_std"] == 0.0
