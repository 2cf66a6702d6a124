"""Scheduling on the clock: each policy's choice on a hand-made channel report, what a policy
needs refused where the network lacks it, the report is the round's own channel, the learner is
told, and never-scheduled devices are counted."""

import json

import numpy as np
import pytest

from netsim import NetworkSystem
from netsim.scheduling import POLICIES, ChannelReport, Expectations, expected_finish, jain_index
from tiny_learners import build, scalar_data

REPORT = ChannelReport(uplink_bps=np.array([5.0, 1.0, 4.0, 4.0, 2.0]) * 1e6, downlink_bps=np.full(5, 10e6))


def test_best_channel_takes_the_highest_uplink_rates():
    assert POLICIES["best-channel"](5, 2).choose(1, REPORT) == (0, 2)  # 5, then 4 (tie: lower index)


def test_proportional_fair_divides_by_the_served_average():
    pf = POLICIES["proportional-fair"](5, 2)
    assert pf.choose(1, REPORT) == (0, 1)  # every ratio starts at 1: ties by index
    pf.observe(1, [0, 1])
    # averages 0.9 x report + 0.1 x served: [5, 1, 3.6, 3.6, 1.8]; ratios [1, 1, 1.11, 1.11, 1.11]
    assert np.allclose(pf.average_bps, np.array([5.0, 1.0, 3.6, 3.6, 1.8]) * 1e6)
    assert pf.choose(2, REPORT) == (2, 3)


def test_age_based_takes_the_longest_since_the_last_upload():
    age = POLICIES["age-based"](5, 2)
    assert age.choose(1, ChannelReport()) == (0, 1)
    age.observe(1, [0])  # device 1 was scheduled but its upload did not arrive
    assert age.choose(2, ChannelReport()) == (1, 2)  # ages [1, 2, 2, 2, 2]


def test_deadline_aware_schedules_who_is_expected_to_finish():
    expect = Expectations(compute_s=np.array([1.0, 1.0, 1.0, 5.0, 1.0]), model_bits=1e6, uplink_bits=2e6)
    report = ChannelReport(uplink_bps=np.array([2.0, 1.0, 4.0, 4.0, 0.0]) * 1e6, downlink_bps=np.full(5, 10e6))
    # alone: 0.1 down + compute + [1, 2, 0.5, 0.5, never] up = [2.1, 3.1, 1.6, 5.6, inf]
    # {2}: 1.6; {2, 0}: 1.6 then max(1.1, 1.6) + 1 = 2.6 <= 3; adding 1 ends at 4.6, adding 3 at 5.6
    assert POLICIES["deadline-aware"](5, 5, 3.0, expect).choose(1, report) == (0, 2)
    assert expected_finish([2, 0], np.full(5, 0.1), expect.compute_s, np.array([1, 2, 0.5, 0.5, 9])) == pytest.approx(2.6)


def test_deadline_aware_on_a_normalized_system_uses_history_only():
    # T_dl = 1, rho = 4, compute 1.5: one device ends at 6.5, each more 4 later: three by 15
    expect = Expectations(np.full(5, 1.5), 32.0, 32.0, downlink_s_per_bit=1 / 32, uplink_s_per_bit=4 / 32)
    scheduler = POLICIES["deadline-aware"](5, 5, 15.0, expect)
    assert scheduler.choose(1, ChannelReport()) == (0, 1, 2)
    scheduler.observe(1, [0, 1, 2])
    assert scheduler.choose(2, ChannelReport()) == (0, 3, 4)  # the two never heard from first


def test_a_policy_asks_the_network_for_what_it_needs_and_refusals_are_named():
    normalized = NetworkSystem(rho=4.0, t_min=1.5, inv_mu=0.0, deadline=15.0)
    with pytest.raises(ValueError, match="scheduler best-channel needs a cell's channel reports"):
        POLICIES["best-channel"].on(normalized, 5, 2, 32.0, 32.0)
    with pytest.raises(ValueError, match="scheduler deadline-aware needs --deadline"):
        POLICIES["deadline-aware"].on(NetworkSystem(rho=4.0, t_min=1.5, inv_mu=0.0), 5, 2, 32.0, 32.0)
    aware = POLICIES["deadline-aware"].on(normalized, 5, 2, 32.0, 32.0)
    assert aware.deadline == 15.0 and aware.choose(1, normalized.channel_report(None)) == (0, 1, 2)  # as by hand below
    assert (aware.expectations.downlink_s_per_bit, aware.expectations.uplink_s_per_bit) == (1 / 32, 4 / 32)
    age = POLICIES["age-based"].on(normalized, 5, 2, 32.0, 32.0)
    assert (age.count, age.deadline, age.expectations) == (2, 15.0, None)


def test_jain_index_by_hand():
    assert jain_index([2, 0, 1, 1]) == pytest.approx(16 / 24)
    assert jain_index([3, 3, 3]) == 1.0 and jain_index([6, 0, 0]) == pytest.approx(1 / 3)
    assert jain_index([0, 0, 0]) is None  # nobody scheduled: 0/0 is undefined, not perfectly fair


def test_on_a_cell_the_report_is_the_rounds_channel_and_the_learner_is_told():
    from netsim import RunOptions, run_cosimulation
    from scenarios.definitions.cells import get_cell_system

    from tests.shannon_link import SHANNON

    # rates below the cap; an unbound network (no HARQ streams' state): the Shannon link layer
    system = get_cell_system("uma-3.5ghz", overrides={"inner_radius_m": 150, "outer_radius_m": 400, **SHANNON})
    network = system.network(system.cell.place(6, np.random.default_rng(0)), np.full(6, 10.0))
    fed = build("fedavg", scalar_data([[float(k)] for k in range(6)]))
    scheduler = POLICIES["best-channel"].on(network, 6, 3, 32.0, 32.0)
    reports = []
    choose = scheduler.choose
    scheduler.choose = lambda r, report: reports.append(report) or choose(r, report)
    records, trace = run_cosimulation(fed, network, 4, np.random.default_rng(1),
                                      RunOptions(channel_rng=np.random.default_rng(2), scheduler=scheduler))
    assert len(reports) == 4
    checked = 0
    for record, report in zip(records[1:], reports):
        chosen = list(record.plan.participants)
        others = [d for d in range(6) if d not in chosen]
        assert len(chosen) == 3 and report.uplink_bps[chosen].min() >= report.uplink_bps[others].max()  # ties: by age
        for e in trace:
            if e.round == record.server_round and e.kind == "uplink":
                assert e.end - e.start == pytest.approx(32.0 / report.uplink_bps[e.entity], rel=1e-12)
                checked += 1
    assert checked >= 8  # uploads whose airtime is the reported rate's


def test_never_scheduled_devices_are_counted_in_the_summary(tmp_path):
    from scenarios.execution.runner import RunSpec, run_experiment

    spec = RunSpec("digits-rotation", "fedavg", "umi-3.5ghz", rounds=3, devices=6, participation=1 / 3, scheduler="best-channel",
                   training={"backend": "loop"})
    summary = run_experiment(spec, tmp_path)
    counts = summary["participation_count"]
    plans = [json.loads(line)["plan"] for line in open(f"{summary['result_dir']}/plans.jsonl")][1:]
    by_hand = [sum(d in plan["participants"] for plan in plans) for d in range(6)]
    assert counts == by_hand and sum(counts) == 3 * 2
    assert summary["never_scheduled"] == by_hand.count(0)
    assert summary["jain_fairness_scheduled"] == pytest.approx(sum(by_hand) ** 2 / (6 * sum(c * c for c in by_hand)))
    config = json.load(open(f"{summary['result_dir']}/config.json"))
    assert config["communication"] == {"scheduler": "best-channel"} and "sched=best-channel" in summary["label"]


def test_jain_index_is_reported_over_scheduled_rounds_and_over_arrived_uploads(tmp_path):
    """With a deadline some scheduled uploads never arrive: the two indices part. Arrivals are
    counted by hand from the trace's uplink events of the training rounds."""
    import csv

    from scenarios.execution.runner import RunSpec, run_experiment

    spec = RunSpec("digits-rotation", "fedavg", "umi-3.5ghz", rounds=3, devices=6, participation=0.5, scheduler="age-based",
                   deadline=0.06, training={"backend": "loop"})
    summary = run_experiment(spec, tmp_path)
    uploads = [int(row["entity"]) for row in csv.DictReader(open(f"{summary['result_dir']}/trace.csv"))
               if row["kind"] == "uplink" and int(row["round"]) > 0]
    arrived = [uploads.count(d) for d in range(6)]
    scheduled = summary["participation_count"]
    assert summary["arrival_count"] == arrived and arrived != scheduled and sum(arrived) > 0
    jain = lambda x: sum(x) ** 2 / (6 * sum(c * c for c in x))  # noqa: E731
    assert summary["jain_fairness_scheduled"] == pytest.approx(jain(scheduled))
    assert summary["jain_fairness_arrived"] == pytest.approx(jain(arrived))
    assert summary["jain_fairness_arrived"] != pytest.approx(summary["jain_fairness_scheduled"])
    assert summary["never_arrived"] == arrived.count(0) > summary["never_scheduled"] == scheduled.count(0)
