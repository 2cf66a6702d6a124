"""Run a resolved run: simulate it, summarize it, write its result folder once.

A run's folder is named by a readable prefix and a hash of its full config, so two different
configs never share a folder. A run whose loss, parameters or simulated numbers stop being
finite stops and is written as ``diverged`` (round and reason).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import torch

from contract.plan import DROP_REASONS
from netsim import RoundRecord, RunOptions, TraceEvent, simulate_rounds
from netsim.transport.durations import NonFiniteTime
from scenarios.definitions import clock, communication
from scenarios.definitions.orchestrators import Job, check_handed, record_problem
from scenarios.records.atomic import check_output_dir, check_replaceable
from scenarios.errors import UsageError
from scenarios.execution.build import PreparedRun, prepare
from scenarios.execution.progress import Progress
from scenarios.execution.spec import RunSpec, resolve
from scenarios.plugins import blame, executed_files, origin
from scenarios.records.health import training_health
from scenarios.records.provenance import code_record, provenance_problem
from scenarios.reports.over_seeds import TIME_FORMATS
from scenarios.log import LOGGER
from scenarios.records.result_folder import (SUMMARY_FILE, config_hash, devices_csv, folder_problem, json_text, plans_jsonl,
                                     plans_problem, read_config, read_summary, rounds_csv, trace_csv, write_folder)

__all__ = ["RunSpec", "run_experiment", "run_prepared", "prepare", "resolve"]


def run_experiment(spec: RunSpec, out_root: Path, data_dir: str | None = None, progress: bool = False, reuse: bool = True) -> dict:
    """Run ``spec`` and write its folder under ``out_root``; returns the run's summary.

    Everything that can be checked is checked before any file or folder is created. With
    ``reuse``, a complete folder (every file matching its checksum) of the same config is not
    run again; a damaged one is run again and replaced, saying so on the ``fl_cosim`` logger.
    """
    prepared = prepare(resolve(spec), data_dir)
    check_output_dir(out_root)
    return run_prepared(prepared, out_root, progress, reuse)


def reusable(folder: Path, config: dict) -> str | None:
    """Why ``folder`` cannot be reused for ``config`` (None: it can): it is not complete (its
    plans included: ``plans_problem``), or it was made by another fl-cosim version, other code
    (``provenance.code``: the package, the plugins loaded now and every plugin module the
    recorded run had imported), other dataset bytes (``provenance.data``) or another config."""
    problem = folder_problem(folder) or plans_problem(folder)
    if problem is not None:
        return problem
    recorded = read_config(folder, checked=True)
    then, now = recorded.get("provenance"), config["provenance"]
    if not isinstance(then, dict):
        return "its config.json records no provenance"
    problem = provenance_problem(then, now)
    if problem is not None:
        return problem
    if config_hash(recorded) != config_hash(config):
        return "its config.json differs"
    return None


def run_prepared(prepared: PreparedRun, out_root: Path, progress: bool = False, reuse: bool = True) -> dict:
    """Simulate a built run and write its folder (or reuse a complete one of the same config)."""
    run, learner = prepared.run, prepared.learner
    final = Path(out_root) / prepared.name
    check_replaceable(final)  # before training: a run whose folder cannot be written is not run
    if reuse and final.exists():
        problem = reusable(final, prepared.config)
        if problem is None:
            return {**read_summary(final), "result_dir": str(final), "reused": True}
        LOGGER.warning("running %s again: %s", final.name, problem)
    unit = prepared.network.time_unit
    bar = Progress(f"{run.label} ({run.training.backend}, {run.training.device})", run.rounds) if progress else None
    records: list[RoundRecord] = []
    has_validation = np.array([d.y_val.shape[0] > 0 for d in learner.data.devices])
    totals = np.zeros(3)  # downlink bits, uplink bits, joules so far
    orchestrator, driven, settings = prepared.orchestration
    plugin = origin("orchestrator", orchestrator.name)
    who = f"orchestrator {orchestrator.name}" + (f" (plugin {plugin['module']})" if plugin else "")

    def watch(record: RoundRecord) -> None:
        if plugin:  # what a plugin's orchestrator hands the engine is input: checked before it is read
            problem = record_problem(record, records[-1] if records else None, learner.num_devices)
            if problem is not None:
                raise ValueError(f"{who} handed back {problem}")
        records.append(record)
        check_simulated(record, totals)
        check_finite(record, learner, has_validation)
        if bar is not None:
            note = ""
            if record.evaluation is not None:
                note = f"t={record.end:{TIME_FORMATS[unit]}} {unit}  mean acc {record.evaluation.mean_accuracy:.3f}"
            bar.update(record.server_round, note)

    diverged = None
    budget = clock.budget(run.spec)
    trace: list[TraceEvent] = []
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # what overflows is caught below, not warned about
            options = RunOptions(watch, run.spec.evaluate_every, channel_rng=prepared.channel_rng, scheduler=prepared.scheduler,
                                 budget=budget)
            rng = np.random.default_rng(run.seeds.network)
            handed = orchestrator.run(Job(driven, settings, prepared.network, run.rounds, rng, run.seeds.network, options, trace))
            records, trace = check_handed(handed, learner.num_devices, who) if plugin else handed
            if budget.stopped and records[-1].evaluation is None:  # the horizon came between evaluations
                records[-1] = dataclasses.replace(records[-1], evaluation=learner.evaluate(records[-1].server_round))
    except (Diverged, NonFiniteTime) as stop:
        if isinstance(stop, NonFiniteTime):  # a round's durations overflowed before it was recorded
            stop = Diverged(records[-1].server_round + 1 if records else 0, f"the simulated time is no longer a finite number ({stop})")
        diverged = {"round": stop.server_round, "reason": stop.reason}
        if not orchestrator.by_messages:
            # the network does not depend on the learning: the recorded plans on the same draws give the trace
            network, channel_rng = run.system.bind(prepared.samples, run.seeds.network)
            _, trace = simulate_rounds([r.plan for r in records], network, learner.model_bits,
                                       np.random.default_rng(run.seeds.network), channel_rng=channel_rng)
    except ValueError as error:
        raise UsageError(f"{run.label}: {error}") from None
    except ImportError as error:  # a plugin's method needs a module that is not installed: the plugin's fault
        where = blame(error)
        if where is None:
            raise
        raise UsageError(f"{run.label}: {where} raised {type(error).__name__}: {error}") from None
    finally:
        learner.trainer.close()  # training worker processes, if the backend started any
        if bar is not None:
            bar.close()
    energy = prepared.network.records_energy
    diverged_round = diverged["round"] if diverged else None
    summary = summarize(run, records, learner, trace if energy else None, diverged)
    summary.update(clock.summary(run.spec, records, budget, budget.time if budget.stopped == "time" else records[-1].end))
    if budget.stopped == "time":
        summary["simulated_time"] = budget.time  # the clock ran to the horizon; what was in flight there is not counted
    if diverged is None:
        summary.update(within_budget(records, budget))
    summary["config_hash"] = config_hash(prepared.config)
    # the code it ran, seen after the run: a plugin's helper that a method imported is in it
    config = {**prepared.config, "provenance": {**prepared.config["provenance"], **code_record(executed_files())}}
    write_folder(final, {
        "config.json": json_text(config),
        "rounds.csv": rounds_csv(records, learner.num_devices, energy, diverged_round),
        "devices.csv": devices_csv(records, learner.num_devices, diverged_round),
        "trace.csv": trace_csv(trace),
        "plans.jsonl": plans_jsonl(records),
        SUMMARY_FILE: json_text(summary),
    })
    return {**read_summary(final), "result_dir": str(final), "reused": False}


SPENT = {"downlink_bits": lambda r: r.downlink_bits, "uplink_bits": lambda r: r.uplink_bits,
         "energy_j": lambda r: float(sum((r.energy_j or {}).values()))}  # a round's spending on a budget's axis


def within_budget(records: list[RoundRecord], budget) -> dict:
    """A run stopped by a bits or energy budget ends after the first round that reaches it
    (``netsim.clock.budget``), usually past it: its result is then its last evaluation whose spending
    so far is within the budget (``final_mean_accuracy``, ``final_worst_accuracy`` and
    ``final_round``), and the round that went past it is ``budget_overshoot`` (its round, what
    had been spent by its end, its accuracies), so that two runs' results compare equal spending.
    Nothing (an empty dict) where the run did not overshoot a bits or energy budget."""
    axis = budget.stopped
    if axis not in SPENT or axis not in budget.limits:
        return {}
    limit = budget.limits[axis]
    spent = np.cumsum([SPENT[axis](r) for r in records])
    if spent[-1] <= limit:
        return {}
    last = max(i for i, r in enumerate(records) if spent[i] <= limit and r.evaluation is not None)  # round 0 spends nothing
    over = records[-1]
    return {
        "final_mean_accuracy": records[last].evaluation.mean_accuracy,
        "final_worst_accuracy": records[last].evaluation.worst_accuracy,
        "final_round": records[last].server_round,
        "budget_overshoot": {"round": over.server_round, "budget": axis, "limit": limit, "spent": float(spent[-1]),
                             "mean_accuracy": over.evaluation.mean_accuracy if over.evaluation else None,
                             "worst_accuracy": over.evaluation.worst_accuracy if over.evaluation else None},
    }


class Diverged(Exception):
    """Raised from the round callback when the loss or the parameters stop being finite."""

    def __init__(self, server_round: int, reason: str):
        super().__init__(server_round, reason)  # SimPy re-raises it from these arguments
        self.server_round = server_round
        self.reason = reason

    def __str__(self) -> str:
        return f"diverged at round {self.server_round}: {self.reason}"


def check_simulated(record: RoundRecord, totals: np.ndarray) -> None:
    """Stop a run whose simulated time, bits or energy (of the round, or summed so far in
    ``totals``) stop being finite numbers: such a run is diverged, never finished."""
    with np.errstate(over="ignore", invalid="ignore"):
        totals += (record.downlink_bits, record.uplink_bits, sum((record.energy_j or {}).values()))
        numbers = {"simulated time": (record.start, record.end), "downlink bits": (record.downlink_bits, totals[0]),
                   "uplink bits": (record.uplink_bits, totals[1]), "energy": (totals[2],)}
    for name, values in numbers.items():
        if not np.isfinite(values).all():
            raise Diverged(record.server_round, f"the {name} is no longer a finite number")


def check_finite(record: RoundRecord, learner, has_validation: np.ndarray) -> None:
    """Stop a run whose validation loss or model parameters are NaN or infinite."""
    evaluation = record.evaluation
    if evaluation is not None:
        scored = has_validation.copy()
        scored[list(getattr(evaluation, "excluded", ()))] = False  # left out of the scores (--unreached excluded): no loss
        loss = np.asarray(evaluation.loss, dtype=float)[scored]
        bad = ~np.isfinite(loss)
        if bad.any():
            kind = "NaN" if np.isnan(loss[bad]).any() else "infinite"
            raise Diverged(record.server_round, f"validation loss is {kind} on {int(bad.sum())} of {loss.size} devices")
    theta = getattr(learner, "theta", None)
    if isinstance(theta, torch.Tensor) and not bool(torch.isfinite(theta).all()):
        raise Diverged(record.server_round, "model parameters are NaN or infinite")


def summarize(run, records: list[RoundRecord], learner, trace: list[TraceEvent] | None = None,
              diverged: dict | None = None) -> dict:
    """The run's summary; on a physical network (``trace`` given) with its energy: totals by
    kind from the trace and per-device totals from the rounds. A diverged run has no final
    accuracy (null), its status and where it stopped."""
    spec = run.spec
    last = records[-1]
    evaluated = [r for r in records if r.evaluation is not None]
    evaluation = evaluated[-1].evaluation if evaluated else None
    extras = dict(evaluation.extras) if evaluation is not None else {}
    reports = run.options.reports()  # option -> the extra reporting what it resolved to (streams=auto: the k chosen)
    resolved = {name: extras[key] for name, key in reports.items() if key in extras}
    sending = [r for r in records if r.server_round > 0 and r.num_streams > 0]
    summary = {
        "label": run.label,
        "algorithm": spec.algorithm,
        "scenario": spec.scenario,
        "system": spec.system,
        "seed": spec.seed,
        "status": "diverged" if diverged else "finished",
        "rounds": last.server_round,
        # streams: what the streams option resolved to, else the last round that sent anything down
        "streams": int(resolved.get("streams", sending[-1].num_streams if sending else 0)),
        "final_mean_accuracy": None if diverged else evaluation.mean_accuracy,
        "final_worst_accuracy": None if diverged else evaluation.worst_accuracy,
        "simulated_time": float(last.end),
        "downlink_bits": float(sum(r.downlink_bits for r in records)),
        "uplink_bits": float(sum(r.uplink_bits for r in records)),
        "time_unit": run.system.time_unit,
        "dropped": dropped_counts(records),
        **drop_fields(records),
        **duration_fields(records),
    }
    if trace is not None:
        device_j = np.zeros(learner.num_devices)
        for r in records:
            for device, joules in (r.energy_j or {}).items():
                device_j[device] += joules
        by_kind = {"receive": 0.0, "compute": 0.0, "uplink": 0.0, "dropped": 0.0, "idle": 0.0}
        for e in trace:  # the rounds the records hold: a round a budget cut short is in the trace, not in energy_j
            if e.kind in by_kind and e.round <= last.server_round:
                by_kind[e.kind] += e.energy_j
        summary.update({
            "energy_j": float(device_j.sum()),
            "receive_energy_j": by_kind["receive"],
            "compute_energy_j": by_kind["compute"],
            # uploads that arrived, and FDMA uploads cut by the deadline
            "transmit_energy_j": by_kind["uplink"] + by_kind["dropped"],
            "idle_energy_j": by_kind["idle"],  # waiting in the rounds (TR 38.840's state model; 0 without it)
            "device_energy_j": device_j.tolist(),
        })
    health = run_health(evaluated, learner.data, diverged)
    unheard = never_heard(records, learner.num_devices)
    summary["training_flags"], summary["training_notes"] = health.flags, health.notes + unheard_note(unheard)
    summary.update(communication.participation_summary(spec, records, learner.num_devices))
    if trace is not None:
        summary.update(cell_fairness(records, learner.num_devices, unheard, summary))
    if diverged:
        summary["diverged"] = diverged
    else:
        summary.update({k: v for k, v in extras.items() if k not in reports.values()})
    return summary


def run_health(evaluated: list[RoundRecord], data, diverged: dict | None):
    """The training-failure signs and notes of ``scenarios.records.health`` over the run's evaluations (a
    diverged round's evaluation measures nothing and is left out; the divergence is a sign)."""
    kept = [r for r in evaluated if not diverged or r.server_round != diverged["round"]]
    num_classes = None if data.task == "regression" else data.num_classes
    return training_health([r.server_round for r in kept], [r.evaluation.mean_accuracy for r in kept],
                           [r.evaluation.mean_loss for r in kept], num_classes,
                           f"{diverged['reason']} at round {diverged['round']}" if diverged else None)


def drop_fields(records: list[RoundRecord]) -> dict[str, int]:
    """Every run: its dropped device-rounds by each reason of ``contract.plan.DROP_REASONS``
    (``dropped_downlink_outage`` ... ``dropped_stale``), 0 where none."""
    dropped = dropped_counts(records)
    return {f"dropped_{reason.replace('-', '_')}": dropped.get(reason, 0) for reason in DROP_REASONS}


def duration_fields(records: list[RoundRecord]) -> dict[str, float | None]:
    """Every run: the mean and the median duration of its training rounds (a buffered run's
    aggregations: the time between two), in the clock's unit; the set-up round left out."""
    spans = [r.duration for r in records if r.server_round > 0]
    return {"round_duration_mean": float(np.mean(spans)) if spans else None,
            "round_duration_median": float(np.median(spans)) if spans else None}


def never_heard(records: list[RoundRecord], num_devices: int) -> list[int]:
    """The devices that had uploads planned and none of which arrived in any round (the set-up
    included): the server never heard from them."""
    planned, heard = np.zeros(num_devices, dtype=bool), np.zeros(num_devices, dtype=bool)
    for r in records:
        planned[[d for d, bits in (r.plan.uplink_bits.items() if r.plan else ()) if bits > 0]] = True
        heard[list(r.arrived)] = True
    return np.flatnonzero(planned & ~heard).tolist()


def unheard_note(unheard: list[int]) -> list[str]:
    """The training note of a run that never heard from some devices (their models are what the
    others trained: their own data never counted)."""
    if not unheard:
        return []
    return [f"never heard: no upload of device{'s' if len(unheard) > 1 else ''} {', '.join(map(str, unheard))} arrived in any round"]


def cell_fairness(records: list[RoundRecord], num_devices: int, unheard: list[int], summary: dict) -> dict:
    """On a cell, every run: the devices never heard (its drops by reason are every run's:
    ``drop_fields``), and, unless a
    scheduler's summary has it, Jain's index over each device's arrived uploads in the training
    rounds (``jain_fairness_arrived``; None when no upload arrived: ``netsim.scheduling.jain_index``)."""
    from netsim.scheduling import jain_index, participation_counts

    found = {"never_heard": len(unheard), "never_heard_devices": unheard}
    if "jain_fairness_arrived" not in summary:
        _, arrived = participation_counts(((r.server_round, (), r.arrived) for r in records), num_devices)
        found["jain_fairness_arrived"] = jain_index(arrived)
    return found


def dropped_counts(records: list[RoundRecord]) -> dict[str, int]:
    """How many device-rounds were dropped, by reason (``contract.plan.DROP_REASONS``), only those found."""
    counts: dict[str, int] = {}
    for r in records:
        for reason in (r.outcome.dropped.values() if r.outcome else ()):
            counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items()))


