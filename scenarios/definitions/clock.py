"""A run's clock settings (RunSpec's section ``clock``): the orchestrator that drives the learner
(synchronous rounds, ``netsim.engine``; buffered asynchronous aggregation, ``netsim.buffered``
with ``learning.asynchronous``) and its budget (``netsim.budget``).

With the defaults (``sync``, no budget) nothing is added to a run's config, label or summary but
``stopped`` (why it ended), so existing runs keep their folders. Otherwise the config records
``clock`` (the settings given).
"""

from __future__ import annotations

from scenarios.errors import UsageError

SYNC, TIERED = "sync", "fedat"


def non_default(spec) -> dict:
    """The run's clock settings that are not their defaults."""
    from scenarios.definitions.settings import declared

    return {f.name: getattr(spec, f.name) for f in declared("clock") if getattr(spec, f.name) != f.default}


def record(config: dict, spec) -> dict:
    """``config`` with the run's non-default clock settings (unchanged otherwise)."""
    changed = non_default(spec)
    return {**config, "clock": changed} if changed else config


def check(run) -> None:
    """UsageError, before anything is built, for a budget the run cannot keep. (Which orchestrators
    read a setting is declared with it and checked with the rest: ``settings.check_effect``.)"""
    from netsim.budget import check_limits

    spec = run.spec
    try:
        limits = check_limits(spec.until)
    except ValueError as error:
        raise UsageError(f"--until: {error}") from None
    if "energy_j" in limits and not run.system.records_energy:
        raise UsageError(f"--until energy_j needs a system that records energy (a cell); {spec.system} does not")


def budget(spec):
    """The run's ``netsim.budget.Budget`` (with no limits when it has none)."""
    from netsim.budget import Budget

    return Budget(dict(spec.until))


def orchestrate(spec, learner, network):
    """(the ``contract.BufferedLearner`` over ``learner``, the settings: ``netsim.buffered.Buffered``,
    or fedat's ``netsim.tiered.Tiered``, its tiers from ``network``'s expected latencies) of an
    asynchronous run; ValueError for an algorithm it cannot drive."""
    from learning.asynchronous import AsyncRule, BufferedServer, TieredServer
    from netsim.buffered import Buffered
    from netsim.tiered import Tiered, expected_latency_s, latency_tiers

    if spec.orchestrator == TIERED:
        tiers = latency_tiers(expected_latency_s(network, learner.num_devices, learner.model_bits), spec.tiers)
        return TieredServer(learner, tiers), Tiered(tiers)

    rule = AsyncRule(spec.orchestrator, spec.server_lr, spec.mixing_alpha, spec.staleness_exponent)
    server = BufferedServer(learner, rule)
    concurrency = learner.num_devices if spec.concurrency is None else spec.concurrency
    if "idle_choice" in non_default(spec) and concurrency >= learner.num_devices:
        raise ValueError(f"--idle-choice chooses which idle devices get a version when --concurrency leaves fewer places than "
                         f"devices; at concurrency {concurrency} (every device) every idle device is sent it")
    if spec.orchestrator == "fedasync":
        k = 1
    else:
        k = max(1, concurrency // 2) if spec.buffer_k is None else spec.buffer_k
    settings = Buffered(k, spec.concurrency, idle_choice=spec.idle_choice, max_staleness=spec.max_staleness)
    settings.check(learner.num_devices)
    return server, settings


def summary(spec, records, budget, clock_end: float) -> dict:
    """``stopped`` (why the run ended: its rounds, or a budget) and, under an asynchronous
    orchestrator, the updates aggregated and their staleness (mean, max: versions behind)."""
    found = {"stopped": budget.summary(clock_end)}
    if spec.orchestrator != SYNC:
        staleness = [u.staleness(r.server_round - 1) for r in records for u in r.updates]
        found.update({"orchestrator": spec.orchestrator, "updates": len(staleness),
                      "staleness_mean": sum(staleness) / len(staleness) if staleness else 0.0,
                      "staleness_max": max(staleness, default=0)})
    return found
