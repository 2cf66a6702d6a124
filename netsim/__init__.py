"""SimPy network engine: the clock of the co-simulation.

It owns the synchronous round loop (``cosimulation_process``), which drives any learner that
satisfies ``contract.Learner`` (each round one vectorized timeline, ``netsim.timeline``, checked
against one SimPy process per device, ``netsim.reference``), and the orchestrators that drive a
``contract.BufferedLearner`` by messages: buffered asynchronous aggregation (``netsim.buffered``:
FedBuff, FedAsync) and FedAT's latency tiers (``netsim.tiered``); each keeps its records through
the one recorder (``netsim.recorder``: the records, which are evaluated, the budget). A physical cell is
``netsim.physical`` (its geometry ``cell``, ``multicell``, ``pathloss``); a device's steps on the
clock (receive, compute, upload) are ``netsim.lifecycle``, what they ask of the channel the
``Links`` protocol of ``netsim.transport`` (``NormalizedLinks``, a cell's ``netsim.links``); the cell in time
``netsim.dynamics`` (motion and the association on the clock, availability, batteries), the NR
link layer ``netsim.link``. It never imports torch.
The learner-clock contract (``RoundPlan``, ``Stream``, ``RoundOutcome``, ``Learner``) lives in
``contract``, which learners import without SimPy; it is re-exported here for convenience.
"""

from contract import Learner, RoundOutcome, RoundPlan, Stream
from netsim.cell import Cell, CellLayout
from netsim.distributions import Deterministic, ShiftedExponential
from netsim.durations import RoundDurations, TimedSystem
from netsim.engine import RoundRecord, RunOptions, retime_plans, run_cosimulation, simulate_rounds
from netsim.kind import SystemKind
from netsim.physical import LinkBudget, PhysicalNetwork, PhysicalSystem
from netsim.round_time import expected_round_time_barrier, harmonic_number
from netsim.system import TIMING_MODES, NetworkSystem
from netsim.timeline import Timeline, round_timeline
from netsim.trace import TraceEvent

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
    "RunOptions",
    "ShiftedExponential",
    "Stream",
    "SystemKind",
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
