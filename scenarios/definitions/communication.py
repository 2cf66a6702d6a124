"""A run's communication levers beyond the streams: update codecs and the network's scheduler.

With the defaults (codecs ``none``, scheduler ``random``) nothing is added to a run's config,
label or summary, so existing runs keep their folders and files. Otherwise the config records
``communication`` (the canonical codec specs and the policy), and a run with a scheduler reports
each device's participation and arrivals and Jain's fairness index of each in the summary (for
``random`` the same numbers follow from ``plans.jsonl`` and ``trace.csv``:
``netsim.scheduling.participation_counts``).
"""

from __future__ import annotations

import numpy as np

from netsim.scheduling import Expectations, Scheduler, jain_index, participation_counts


def non_default(spec) -> dict:
    """The run's communication settings (RunSpec's section ``communication``) that are not their defaults."""
    from scenarios.definitions.settings import COMMUNICATION_DEFAULTS

    return {key: getattr(spec, key) for key, default in COMMUNICATION_DEFAULTS.items() if getattr(spec, key) != default}


def record(config: dict, spec) -> dict:
    """``config`` with the run's non-default communication settings (unchanged otherwise)."""
    changed = non_default(spec)
    return {**config, "communication": changed} if changed else config


def build_scheduler(spec, learner, system, network, physical: bool) -> Scheduler | None:
    """The run's scheduler (None for ``random``: the learner samples, as it always has)."""
    if spec.scheduler == "random":
        return None
    m = learner.num_devices
    count = max(1, int(round(learner.setup.participation * m)))
    links = getattr(learner, "links", None)
    uplink_bits = links.uplink_bits(learner.model_bits) if links is not None else learner.model_bits
    if physical:
        compute_s = np.array([network.compute_s(d, network.system.compute_extra_s) for d in range(m)])
        expectations = Expectations(compute_s, learner.model_bits, uplink_bits)
    else:
        expectations = Expectations(np.full(m, system.compute.mean), learner.model_bits, uplink_bits,
                                    system.t_dl / learner.model_bits, system.t_ul / learner.model_bits)
    scheduler = Scheduler(spec.scheduler, m, count, system.deadline, expectations, physical)
    if count >= m and spec.scheduler != "deadline-aware":  # every device takes part: the policy chooses nothing
        raise ValueError(f"scheduler {spec.scheduler} chooses which devices take part, but with participation "
                         f"{learner.setup.participation:g} all {m} do: it would change nothing; give --participation below 1")
    return scheduler


def participation_summary(spec, records, num_devices: int) -> dict:
    """With a scheduler: per device, rounds scheduled and uploads arrived (training rounds), the
    devices never scheduled and never heard from, and Jain's index of each count:
    ``jain_fairness_scheduled`` (who was given a slot) and ``jain_fairness_arrived`` (whose
    uploads got through: a deadline or an outage can leave a scheduled device unheard); else empty."""
    if spec.scheduler == "random":
        return {}
    scheduled, arrived = participation_counts(((r.server_round, r.plan.participants if r.plan else (), r.arrived) for r in records),
                                              num_devices)
    return {"participation_count": scheduled.tolist(), "arrival_count": arrived.tolist(),
            "never_scheduled": int(np.sum(scheduled == 0)), "never_arrived": int(np.sum(arrived == 0)),
            "jain_fairness_scheduled": jain_index(scheduled), "jain_fairness_arrived": jain_index(arrived)}

