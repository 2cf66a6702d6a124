"""A run's clock settings (RunSpec's section ``clock``): the orchestrator that drives the learner
(``scenarios.definitions.orchestrators``: synchronous rounds, ``netsim.clock.engine``; buffered
asynchronous aggregation, ``netsim.clock.buffered``; FedAT's tiers, ``netsim.clock.tiered``; a plugin's) and
its budget (``netsim.clock.budget``).

With the defaults (``sync``, no budget) nothing is added to a run's config, label or summary but
``stopped`` (why it ended), so existing runs keep their folders. Otherwise the config records
``clock`` (the settings given).
"""

from __future__ import annotations

from scenarios.errors import UsageError


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
    from netsim.clock.budget import check_limits

    spec = run.spec
    try:
        limits = check_limits(spec.until)
    except ValueError as error:
        raise UsageError(f"--until: {error}") from None
    if "energy_j" in limits and not run.system.records_energy:
        raise UsageError(f"--until energy_j needs a system that records energy (a cell); {spec.system} does not")


def budget(spec):
    """The run's ``netsim.clock.budget.Budget`` (with no limits when it has none)."""
    from netsim.clock.budget import Budget

    return Budget(dict(spec.until))


def orchestrate(spec, learner, network):
    """(the orchestrator named by ``spec``, the learner it drives over ``learner``, its settings
    from ``spec`` and ``network``): ``scenarios.definitions.orchestrators``; ValueError for
    settings or an algorithm it cannot take."""
    from scenarios.definitions.orchestrators import get_orchestrator

    orchestrator = get_orchestrator(spec.orchestrator)
    settings = orchestrator.settings(spec, learner, network)
    return orchestrator, orchestrator.wrap(learner, settings), settings


def summary(spec, records, budget, clock_end: float) -> dict:
    """``stopped`` (why the run ended: its rounds, or a budget) and, under an orchestrator that
    drives the learner by messages (``Orchestrator.by_messages``), the updates aggregated and their staleness (mean, max: versions behind)."""
    from scenarios.definitions.orchestrators import get_orchestrator

    found = {"stopped": budget.summary(clock_end)}
    if get_orchestrator(spec.orchestrator).by_messages:
        staleness = [u.staleness(r.server_round - 1) for r in records for u in r.updates]
        found.update({"orchestrator": spec.orchestrator, "updates": len(staleness),
                      "staleness_mean": sum(staleness) / len(staleness) if staleness else 0.0,
                      "staleness_max": max(staleness, default=0)})
    return found
