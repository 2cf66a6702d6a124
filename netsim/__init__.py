"""SimPy network engine: the clock of the co-simulation. It never imports torch.

What is where (each room's ``__init__`` says what it holds and what it may import;
``tests/test_layers.py`` checks the rules):

- ``netsim.clock``: who moves the clock for a run and drives the learner: the synchronous round
  loop (``clock.engine``: ``run_cosimulation``, ``simulate_rounds``, ``retime_plans``), buffered
  asynchronous aggregation (``clock.buffered``: FedBuff, FedAsync), FedAT's latency tiers
  (``clock.tiered``), the one recorder of them all (``clock.recorder``: records, evaluations, budget) and a run's budget (``clock.budget``).
- ``netsim.transport``: the media as SimPy resources (``transport.media``, ``fifo``,
  ``block_queue``, ``shared_uplink``), a device's steps on the clock, the same for every orchestrator (``lifecycle``), one round as SimPy
  processes (``reference``, ``physical_round``) and as vectorized timelines giving the same
  events (``timeline``, ``physical_timeline``), the round's durations, hold and trace line.
- ``netsim.radio``: the cell: ``radio.physical`` (``PhysicalSystem``, ``PhysicalNetwork``), its
  geometry (``cell``, ``multicell``, ``pathloss``), fading, link budget, duplexing, energy, a
  round's links (``physical_links``), the NR link layer (``radio.link``) and the transfers
  through it (``harq_uplink``, ``harq_downlink``).
- ``netsim.normalized``: the journal paper's V-D system (``normalized.system``:
  ``NetworkSystem``), compute distributions, the closed-form round time, scripted systems.
- ``netsim.dynamics``: the cell in time: motion and the association on the clock,
  availability, batteries.
- At the top, the protocols between the rooms: ``netsim.kind`` (what a run asks of a system and
  the engine of a network, whatever its kind), ``netsim.scheduling`` (who takes part in a round,
  and the channel report and expectations a system gives the scheduler) and
  ``netsim.physical_protocol`` (what a round reads of a cell, so the rounds never import it).

The learner-clock contract (``RoundPlan``, ``Stream``, ``RoundOutcome``, ``Learner``) lives in
``contract``, which learners import without SimPy; it is re-exported here for convenience.
"""

from contract import Learner, RoundOutcome, RoundPlan, Stream
from netsim.radio.cell import Cell, CellLayout
from netsim.normalized.distributions import Deterministic, ShiftedExponential
from netsim.transport.durations import RoundDurations, TimedSystem
from netsim.clock.engine import RoundRecord, RunOptions, retime_plans, run_cosimulation, simulate_rounds
from netsim.kind import SystemKind
from netsim.radio.physical import LinkBudget, PhysicalNetwork, PhysicalSystem
from netsim.normalized.round_time import expected_round_time_barrier, harmonic_number
from netsim.normalized.system import TIMING_MODES, NetworkSystem
from netsim.transport.timeline import Timeline, round_timeline
from netsim.transport.trace import TraceEvent

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
