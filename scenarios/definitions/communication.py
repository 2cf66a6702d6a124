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

from netsim.scheduling import POLICIES, Policy, jain_index, participation_counts


def non_default(spec) -> dict:
    """The run's communication settings (RunSpec's section ``communication``) that are not their defaults."""
    from scenarios.definitions.settings import COMMUNICATION_DEFAULTS

    return {key: getattr(spec, key) for key, default in COMMUNICATION_DEFAULTS.items() if getattr(spec, key) != default}


def record(config: dict, spec) -> dict:
    """``config`` with the run's non-default communication settings (unchanged otherwise)."""
    changed = non_default(spec)
    return {**config, "communication": changed} if changed else config


def build_scheduler(spec, learner, network) -> Policy | None:
    """The run's scheduling policy on its bound ``network`` (None for ``random``: the learner
    samples, as it always has); ValueError naming what the policy needs that the run lacks."""
    if spec.scheduler == "random":
        return None
    policy = POLICIES[spec.scheduler]
    m = learner.num_devices
    count = max(1, int(round(learner.setup.participation * m)))
    links = getattr(learner, "links", None)
    uplink_bits = links.uplink_bits(learner.model_bits) if links is not None else learner.model_bits
    scheduler = policy.on(network, m, count, learner.model_bits, uplink_bits)
    if count >= m and policy.picks_count:  # every device takes part: the policy chooses nothing
        raise ValueError(f"scheduler {spec.scheduler} chooses which devices take part, but with participation "
                         f"{learner.setup.participation:g} all {m} do: it would change nothing; give --participation below 1")
    return scheduler


def participation_summary(spec, records, num_devices: int) -> dict:
    """With a scheduler: per device, rounds scheduled and uploads arrived (training rounds), the
    devices never scheduled and never heard from, and Jain's index of each count:
    ``jain_fairness_scheduled`` (who was given a slot) and ``jain_fairness_arrived`` (whose
    uploads got through: a deadline or an outage can leave a scheduled device unheard), each None
    (null in ``summary.json``) when its counts are all 0 (``jain_index``); else empty."""
    if spec.scheduler == "random":
        return {}
    scheduled, arrived = participation_counts(((r.server_round, r.plan.participants if r.plan else (), r.arrived) for r in records),
                                              num_devices)
    return {"participation_count": scheduled.tolist(), "arrival_count": arrived.tolist(),
            "never_scheduled": int(np.sum(scheduled == 0)), "never_arrived": int(np.sum(arrived == 0)),
            "jain_fairness_scheduled": jain_index(scheduled), "jain_fairness_arrived": jain_index(arrived)}

