"""The composition matrix (issue 56): every orchestrator x system kind x dynamics x algorithm
either runs 10 aggregations with the clock's invariants holding, or is refused in one line
before anything trains; the refused combinations are the ones ``docs/composition.md`` names.

Each combination is read as the command line reads it (``resolve``, ``clock.check``: the real
system, bound with its real dynamics) and driven by the real orchestrators, with a learner of
one scalar parameter on six devices whose model the network sees as 25 kbit, so the whole
matrix costs seconds. Invariants checked on every run that is not refused:

- time monotone: records back to back, every trace event within its span, in the clock's order;
- nothing silently lost: a synchronous round's participants all arrived or were dropped with a
  reason; under a buffered orchestrator every dispatch ends in one update, one drop with a
  reason, or is in flight at the end (``tests/test_buffered_dynamics.check_invariants``);
- bits and joules counted once: the records' totals are the trace's;
- no offline or flat device receives, computes or uploads.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import re
from pathlib import Path

import numpy as np
import pytest

from netsim.clock.engine import RunOptions
from netsim.radio.physical import PhysicalSystem
from scenarios.definitions import clock
from scenarios.definitions.orchestrators import Job
from scenarios.errors import UsageError
from scenarios.execution.spec import RunSpec, resolve
from tests.test_buffered_dynamics import check_invariants
from tests.tiny_learners import build, scalar_data

ROOT = Path(__file__).resolve().parent.parent
DEVICES, AGGREGATIONS, MODEL_BITS = 6, 10, 2.5e4
# 25 kbit: a quarter of the transport blocks nr-harq draws one by one; the cell's deadline and
# battery are scaled with it (uploads last and cost about a quarter), so every cell still has
# deadline drops, and every battery run an empty battery, as at 100 kbit, 0.05 s and 0.02 J
BATTERY_J = 0.005
ORCHESTRATORS = {
    "barrier": {"mode": "barrier"},
    "pipelined": {"mode": "pipelined"},
    "deadline": {"mode": "barrier", "deadline": None},  # the deadline in the system's unit: DEADLINES
    "fedbuff": {"orchestrator": "fedbuff"},
    "fedasync": {"orchestrator": "fedasync"},
    "fedat": {"orchestrator": "fedat", "tiers": 2},
}
DEADLINES = {"normalized": 3.0, "static cell": 0.0125, "moving cell": 0.0125, "shannon moving cell": 0.0125,
             "fdma clock cell": 0.0125, "pf cell": 0.0125, "pf moving cell": 0.0125}  # T_dl; seconds on a cell
# the preset's defaults (nr-harq on power-limit TDMA grants, ue_energy=slots), and Shannon's rates on the same grants on a
# moving cell (the segmented TDMA path that does not go through the link layer: a grant held narrower than a step's own)
SYSTEMS = {"normalized": ("wireless-slow-ul", {}), "static cell": ("umi-3.5ghz", {}),
           "moving cell": ("umi-3.5ghz", {"speed_kmh": 30.0}), "shannon moving cell": ("umi-3.5ghz", {"link_abstraction": "shannon", "speed_kmh": 30.0}),
           "fdma clock cell": ("umi-3.5ghz", {"uplink_access": "fdma", "ul_interference": "clock"}),
           "pf cell": ("umi-3.5ghz", {"uplink_access": "pf"}),
           "pf moving cell": ("umi-3.5ghz", {"uplink_access": "pf", "speed_kmh": 30.0})}
DYNAMICS = {"none": {}, "availability": {"mean_on_s": 0.2, "mean_off_s": 0.1}, "batteries": {"battery_j": BATTERY_J}}
ALGORITHMS = {"fedavg": {}, "fedprox": {}, "scaffold": {}, "user-centric": {"streams": 2, "variance_batch_size": 1}}
STEPS = ("receive", "compute", "uplink")
COMBINATIONS = [(o, s, d, a) for o in ORCHESTRATORS for s in SYSTEMS for d in DYNAMICS for a in ALGORITHMS]


def _spec(orchestrator, system, dynamics, algorithm) -> RunSpec:
    name, radio = SYSTEMS[system]
    settings = dict(ORCHESTRATORS[orchestrator])
    if "deadline" in settings:
        settings["deadline"] = DEADLINES[system]
    return RunSpec("digits-rotation", algorithm, rounds=AGGREGATIONS, system=name, radio={**radio, **DYNAMICS[dynamics]},
                   **settings)


def _learner(algorithm):
    data = scalar_data([[float(d), float(d) + 0.5] for d in range(DEVICES)], groups=[d % 2 for d in range(DEVICES)])
    learner = build(algorithm, data, {"backend": "loop"}, **ALGORITHMS[algorithm])
    learner.model_bits = MODEL_BITS  # what the network carries; the tiny model trains in microseconds
    return learner


def attempt(orchestrator, system, dynamics, algorithm):
    """("refused", the one-line reason) or ("ran", records, trace, network, ledger)."""
    try:
        run = resolve(_spec(orchestrator, system, dynamics, algorithm))
        clock.check(run)
        learner = _learner(algorithm)
        network, channel_rng = _network(run.system)
        options = RunOptions(channel_rng=channel_rng)
        orchestrator, server, settings = clock.orchestrate(run.spec, learner, network)  # the registry's, by name
        trace: list = []
        ledger = Ledger(server, trace) if orchestrator.by_messages else None
        records, trace = orchestrator.run(Job(ledger or server, settings, network, AGGREGATIONS, np.random.default_rng(0),
                                              np.random.SeedSequence(0), options, trace))
        return "ran", records, trace, network, ledger
    except (UsageError, ValueError) as error:
        return "refused", str(error)


def _network(system):
    """(network, channel generator) of ``system``: a deep copy of its bound network, the very
    state a fresh bind gives. A cell's timing (``mode``, ``deadline``) is read from
    ``network.system`` as the rounds run and nothing ``bind`` draws depends on it, so the
    orchestrators share one bind per cell and its dynamics, the run's timing put back."""
    if not isinstance(system, PhysicalSystem):
        return copy.deepcopy(_bound(system))
    network, channel_rng = copy.deepcopy(_bound(dataclasses.replace(system, mode="barrier", deadline=None)))
    return dataclasses.replace(network, system=system), channel_rng


@functools.lru_cache(maxsize=None)
def _bound(system):
    """(network, channel generator) of ``system`` (its dynamics included), bound once (placing
    the devices among 19 sites and starting their motion is the matrix's largest cost)."""
    return system.bind(np.full(DEVICES, 2.0), np.random.SeedSequence(3))


class Ledger:
    """The buffered learner, with the messages it was given logged against the trace's length
    (what ``check_invariants`` reads)."""

    def __init__(self, server, trace: list):
        self.server, self.trace, self.messages = server, trace, []
        self.num_devices, self.model_bits = server.num_devices, MODEL_BITS

    def dispatch(self, message):
        self.messages.append((len(self.trace), "dispatch", message.device, message.version))
        self.server.dispatch(message)

    def local_update(self, update):
        self.messages.append((len(self.trace), "update", update.device, update.sequence))
        self.server.local_update(update)

    def aggregate(self, version, updates):
        self.messages.append((len(self.trace), "aggregate", version, tuple(u.sequence for u in updates)))
        self.server.aggregate(version, updates)

    def evaluate(self, version):
        return self.server.evaluate(version)


def check_rounds(records, trace, network):
    """A synchronous run's invariants (the buffered ones: ``check_invariants``)."""
    assert [r.server_round for r in records] == list(range(len(records)))
    assert all(a.end <= b.start for a, b in zip(records, records[1:])) and all(r.start <= r.end for r in records)
    assert all(e.start <= e.end for e in trace)
    for record in records[1:]:
        span = [e for e in trace if e.round == record.server_round]
        assert all(record.start <= e.start and e.end <= record.end + 1e-9 for e in span)
        outcome, participants = record.outcome, set(record.plan.participants)
        assert set(outcome.arrived) | set(outcome.dropped) == participants  # nothing silently lost
        assert not set(outcome.arrived) & set(outcome.dropped) and all(outcome.dropped.values())
        assert record.uplink_bits == sum(record.plan.uplink_bits[d] for d in outcome.arrived)
        assert record.downlink_bits == sum(e.bits for e in span if e.kind == "downlink")
        if record.energy_j is not None:
            assert sum(record.energy_j.values()) == pytest.approx(sum(e.energy_j for e in span))
    dynamics = getattr(network, "dynamics", None)
    if dynamics is None:
        return
    for e in trace:
        if e.kind not in STEPS:
            continue
        if dynamics.availability is not None:
            assert dynamics.availability.available(e.start)[e.entity], e
        if dynamics.batteries is not None:
            spent_before = sum(x.energy_j for x in trace if x.entity == e.entity and x.kind != "downlink" and x.end <= e.start)
            assert spent_before < BATTERY_J, e


@pytest.fixture(scope="module")
def matrix():
    return {combination: attempt(*combination) for combination in COMBINATIONS}


@pytest.mark.parametrize("combination", COMBINATIONS, ids=["/".join(c) for c in COMBINATIONS])
def test_each_combination_runs_with_its_invariants_or_is_refused_in_one_line(matrix, combination):
    result = matrix[combination]
    if result[0] == "refused":
        assert result[1] and "\n" not in result[1]
        return
    _, records, trace, network, ledger = result
    assert len(records) >= 2  # the initial model and at least one aggregation (a flat cell may stall)
    if ledger is None:
        check_rounds(records, trace, network)
    else:
        check_invariants(records, trace, ledger, getattr(network, "dynamics", None),
                         capacity_j=DYNAMICS[combination[2]].get("battery_j"))
    orchestrator, system, dynamics, _ = combination
    if dynamics == "none" and orchestrator != "deadline":
        assert len(records) == AGGREGATIONS + 1
    if dynamics != "none":
        reason = {"availability": "unavailable", "batteries": "battery"}[dynamics]
        dropped = {e.reason for e in trace if e.kind == "dropped"}
        assert reason in dropped, dropped  # the dynamics changed the run


def _documented() -> set[tuple[str, str, str, str]]:
    """The refused combinations ``docs/composition.md``'s table names (``*``: every value)."""
    text = (ROOT / "docs" / "composition.md").read_text()
    table = text.split("<!-- refused -->")[1]
    found = set()
    for line in table.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or cells[0] in ("orchestrator", "") or set(cells[0]) <= set("-: "):
            continue
        axes = [list(ORCHESTRATORS), list(SYSTEMS), list(DYNAMICS), list(ALGORITHMS)]
        chosen = [axis if cell == "*" else [v.strip() for v in re.split(r",\s*", cell)] for axis, cell in zip(axes, cells)]
        found |= {(o, s, d, a) for o in chosen[0] for s in chosen[1] for d in chosen[2] for a in chosen[3]}
    return found


def test_the_refused_combinations_are_those_the_docs_name(matrix):
    refused = {c for c, result in matrix.items() if result[0] == "refused"}
    assert refused == _documented()


def test_the_axes_are_those_the_docs_name():
    """Each axis's values in ``docs/composition.md``'s first table are the matrix's, in its order."""
    text = (ROOT / "docs" / "composition.md").read_text().split("<!-- refused -->")[0]
    rows = {line.split("|")[1].strip(): line.split("|", 2)[2] for line in text.splitlines() if line.startswith("| ")}
    for axis, values in (("orchestrator", ORCHESTRATORS), ("system", SYSTEMS), ("dynamics", DYNAMICS),
                         ("algorithm", ALGORITHMS)):
        depth, outside = 0, []
        for char in rows[axis]:  # the values are the backticked names outside every parenthesis
            depth += (char == "(") - (char == ")")
            outside.append(char if depth == 0 and char != ")" else "")
        assert re.findall(r"`([^`]+)`", "".join(outside)) == list(values), axis
