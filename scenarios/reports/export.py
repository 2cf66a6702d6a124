"""Finished result folders to experiment trackers: TensorBoard event files, and MLflow where installed.

Reads folders only (every file checked against its checksum), never retrains. Each evaluated
round is one step: ``accuracy/mean``, ``accuracy/worst``, and the network's numbers as their
own series, ``network/time`` (simulated, in the run's time unit), ``network/downlink_bits``,
``network/uplink_bits`` and on a cell ``network/energy_j``. The resolved config, flattened to
``a.b.c`` keys, goes in as hyper-parameters, with the final numbers as their metrics.

Trackers take integer steps only, so the accuracy against another x axis (``steps``) is its
own pair of series, added to the per-round ones, whose step is that axis in a stated integer
unit: ``accuracy_vs_time_ms`` (milliseconds, on a cell) or ``accuracy_vs_time_mTdl``
(thousandths of ``T_dl``), ``accuracy_vs_bits`` (downlink + uplink bits),
``accuracy_vs_energy_uJ`` (microjoules, all devices; runs on a cell only), each ``/mean`` and
``/worst``.

Units where the trackers show them: TensorBoard's x axis is always "step", so each log folder
holds a custom-scalars layout (TensorBoard's "Custom Scalars" tab) whose categories and chart
titles name each series' unit and what its step counts (``layout``); every event's wall time is
the round's simulated time (``wall_times``: seconds on a cell, ``T_dl`` counted as seconds
otherwise), so TensorBoard's "Relative" x axis is simulated time. MLflow has no unit field: each
run carries a ``unit.METRIC`` tag per metric, and each metric's timestamp is the simulated time
(milliseconds, MLflow's unit), so its "Relative time" axis is simulated time too.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from scenarios.records.result_folder import ResultError, RunCurve, read_run


def flat_config(config: dict, prefix: str = "") -> dict[str, str | float | int | bool]:
    """Nested config as ``a.b.c`` keys; lists and None as JSON text (what trackers accept)."""
    flat: dict[str, str | float | int | bool] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flat_config(value, f"{name}."))
        elif isinstance(value, (bool, int, float, str)):
            flat[name] = value
        else:
            flat[name] = json.dumps(value, allow_nan=False)
    return flat


def round_series(run: RunCurve) -> dict[str, list[float]]:
    """Per evaluated round, the series a tracker receives (tag -> values, one per ``run.rounds``)."""
    series = {
        "accuracy/mean": run.mean_accuracy,
        "accuracy/worst": run.worst_accuracy,
        "network/time": run.time,
        "network/downlink_bits": run.downlink_bits,
        "network/uplink_bits": run.uplink_bits,
    }
    if run.energy_j is not None:
        series["network/energy_j"] = run.energy_j
    return series


STEP_AXES = ("round", "time", "bits", "energy")


def step_series(run: RunCurve, axis: str) -> tuple[str, list[int]] | None:
    """(tag prefix, integer step per evaluated round) of the accuracy against ``axis`` (one of
    ``STEP_AXES`` but round); None where the run has no such axis (energy off a cell)."""
    if axis == "time":
        scaled, unit = run.time, "ms" if run.time_unit == "s" else "mTdl"
        return f"accuracy_vs_time_{unit}", [round(1000 * t) for t in scaled]
    if axis == "bits":
        return "accuracy_vs_bits", [round(d + u) for d, u in zip(run.downlink_bits, run.uplink_bits)]
    if axis == "energy" and run.energy_j is not None:
        return "accuracy_vs_energy_uJ", [round(1e6 * j) for j in run.energy_j]
    return None


ROUND_UNITS = {"accuracy/mean": "fraction", "accuracy/worst": "fraction", "network/downlink_bits": "bits",
               "network/uplink_bits": "bits", "network/energy_j": "J"}  # network/time: the run's time unit
STEP_UNITS = {"time": {"s": "ms", "T_dl": "thousandths of T_dl"}, "bits": "bits, downlink + uplink", "energy": "microjoules, all devices"}


def units(run: RunCurve, steps: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """Per tag ``logged_series`` writes for ``steps``: (its values' unit, what its step counts)."""
    found = {}
    for axis in _with_rounds(steps):
        if axis == "round":
            found.update({tag: (ROUND_UNITS.get(tag, run.time_unit), "round") for tag in round_series(run)})
        elif (pair := step_series(run, axis)) is not None:
            unit = STEP_UNITS[axis][run.time_unit] if axis == "time" else STEP_UNITS[axis]
            found.update({f"{pair[0]}/{name}": (f"{name} accuracy (fraction)", f"{axis} ({unit})") for name in ("mean", "worst")})
    return found


def layout(run: RunCurve, steps: tuple[str, ...]) -> dict:
    """The custom-scalars layout (TensorBoard's ``Custom Scalars`` tab): one category per x axis
    titled with its unit, one chart per series titled with its own."""
    categories: dict[str, dict[str, list]] = {}
    for tag, (unit, axis) in units(run, steps).items():
        categories.setdefault(f"against {axis}", {})[f"{tag} [{unit}]"] = ["Multiline", [tag]]
    return categories


def wall_times(run: RunCurve) -> list[float]:
    """Per evaluated round, the event wall time a tracker is given: its simulated time (seconds on
    a cell; a ``T_dl`` counted as a second otherwise)."""
    return [float(t) for t in run.time]


def _with_rounds(steps: tuple[str, ...]) -> tuple[str, ...]:
    """The per-round series always, then the other axes asked for (``--step`` adds)."""
    return tuple(dict.fromkeys(("round", *steps)))


def logged_series(run: RunCurve, steps: tuple[str, ...] = ("round",)):
    """Every (tag, step, value, simulated time) a tracker receives: the per-round series and the
    series of each other axis of ``steps``; an unevaluated number (NaN) is left out, never
    logged as a value."""
    times = wall_times(run)
    for axis in _with_rounds(steps):
        if axis == "round":
            series = [(tag, run.rounds, values) for tag, values in round_series(run).items()]
        else:
            found = step_series(run, axis)
            series = [] if found is None else [(f"{found[0]}/{name}", found[1], values) for name, values in
                                               (("mean", run.mean_accuracy), ("worst", run.worst_accuracy))]
        for tag, positions, values in series:
            for step, value, time in zip(positions, values, times):
                if value == value:
                    yield tag, step, value, time


def final_metrics(run: RunCurve) -> dict[str, float]:
    numbers = {key: run.summary.get(key) for key in ("final_mean_accuracy", "final_worst_accuracy", "simulated_time")}
    return {f"final/{key}": float(value) for key, value in numbers.items() if isinstance(value, (int, float))}


def write_tensorboard(run: RunCurve, folder: Path, steps: tuple[str, ...] = ("round",)) -> None:
    """One TensorBoard log folder for one run (the scalars at their simulated wall times, the
    custom-scalars layout with the units, then the hparams summary)."""
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(log_dir=str(folder)) as writer:
        for tag, step, value, time in logged_series(run, steps):
            writer.add_scalar(tag, value, step, walltime=time)
        writer.add_custom_scalars(layout(run, steps))
        writer.add_hparams(flat_config(run.config), final_metrics(run), run_name="hparams")


def export_tensorboard(result_dirs: list[str], out: Path, force: bool, steps: tuple[str, ...] = ("round",)) -> list[Path]:
    """Every run read (and verified) first, each holding every axis of ``steps``, then one log
    folder each, ``OUT/RUN_FOLDER_NAME``, written under a temporary name and renamed into place;
    an existing log folder is replaced only with ``force``."""
    runs = [read_run(folder) for folder in result_dirs]
    for run in runs:  # an axis a run lacks would be an empty series reported as written
        if "energy" in steps and run.energy_j is None:
            raise ResultError(f"{run.folder} has no energy series (it did not run on a physical cell); leave out --step energy")
    targets = [out / Path(run.folder).name for run in runs]
    if not force:
        existing = [str(target) for target in targets if target.exists()]
        if existing:
            raise FileExistsError(existing[0])
    out.mkdir(parents=True, exist_ok=True)
    for run, target in zip(runs, targets):
        partial = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=out))
        try:
            write_tensorboard(run, partial, steps)
            os.chmod(partial, 0o777 & ~_umask())
            if target.exists():
                shutil.rmtree(target)
            partial.rename(target)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return targets


def export_mlflow(result_dirs: list[str], tracking_uri: str, experiment: str, steps: tuple[str, ...] = ("round",)) -> list[str]:
    """One MLflow run per result folder: the flattened config as params, the series as step metrics."""
    import mlflow

    runs = [read_run(folder) for folder in result_dirs]
    try:
        mlflow.set_tracking_uri(tracking_uri)
        mlflow.set_experiment(experiment)
        return [_mlflow_run(mlflow, run, steps) for run in runs]
    except mlflow.exceptions.MlflowException as error:
        raise TrackerError(f"MLflow at {tracking_uri!r} refused the export: {str(error).splitlines()[0]}") from None


class TrackerError(RuntimeError):
    """A tracker refused what was sent; the message is one line."""


def _mlflow_run(mlflow, run: RunCurve, steps: tuple[str, ...]) -> str:
    """One MLflow run; MLflow's metric names take no '/', so ``accuracy/mean`` is ``accuracy_mean``."""
    with mlflow.start_run(run_name=Path(run.folder).name) as active:
        mlflow.log_params({key: str(value)[:500] for key, value in flat_config(run.config).items()})
        mlflow.set_tags({f"unit.{tag.replace('/', '_')}": f"{unit} against {axis}" for tag, (unit, axis) in units(run, steps).items()})
        for tag, step, value, time in logged_series(run, steps):
            mlflow.log_metric(tag.replace("/", "_"), value, step=step, timestamp=round(1000 * time))
        mlflow.log_metrics({key.replace("/", "_"): value for key, value in final_metrics(run).items()})
        return active.info.run_id


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
