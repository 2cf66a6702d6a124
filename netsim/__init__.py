"""SimPy network engine: the clock of the co-simulation.

It owns the one round loop (``cosimulation_process``) and drives any learner that
satisfies ``Learner``; each round is one vectorized timeline (``netsim.timeline``), checked
against one SimPy process per device (``netsim.reference``). It never imports torch.

The names below load their modules on first use, so that ``netsim.plan`` (the plan and
protocol types the learners import) comes without SimPy.
"""

import importlib

_EXPORTS = {
    "Cell": "netsim.cell",
    "CellLayout": "netsim.cell",
    "Deterministic": "netsim.distributions",
    "ShiftedExponential": "netsim.distributions",
    "RoundDurations": "netsim.durations",
    "TimedSystem": "netsim.durations",
    "RoundRecord": "netsim.engine",
    "retime_plans": "netsim.engine",
    "run_cosimulation": "netsim.engine",
    "simulate_rounds": "netsim.engine",
    "LinkBudget": "netsim.physical",
    "PhysicalNetwork": "netsim.physical",
    "PhysicalSystem": "netsim.physical",
    "Learner": "netsim.plan",
    "RoundOutcome": "netsim.plan",
    "RoundPlan": "netsim.plan",
    "Stream": "netsim.plan",
    "expected_round_time_barrier": "netsim.round_time",
    "harmonic_number": "netsim.round_time",
    "TIMING_MODES": "netsim.system",
    "NetworkSystem": "netsim.system",
    "Timeline": "netsim.timeline",
    "round_timeline": "netsim.timeline",
    "TraceEvent": "netsim.trace",
}

__all__ = [
    "Cell",
    "CellLayout",
    "Deterministic",
    "Learner",
    "LinkBudget",
    "NetworkSystem",
    "PhysicalNetwork",
    "PhysicalSystem",
    "RoundDurations",
    "RoundOutcome",
    "RoundPlan",
    "RoundRecord",
    "ShiftedExponential",
    "Stream",
    "TIMING_MODES",
    "TimedSystem",
    "Timeline",
    "TraceEvent",
    "expected_round_time_barrier",
    "harmonic_number",
    "retime_plans",
    "round_timeline",
    "run_cosimulation",
    "simulate_rounds",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'netsim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
