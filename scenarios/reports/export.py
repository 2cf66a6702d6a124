"""Finished result folders to experiment trackers: TensorBoard event files, and MLflow where installed.

Reads folders only (every file checked against its checksum), never retrains. Each evaluated
round is one step: ``accuracy/mean``, ``accuracy/worst``, and the network's numbers as their
own series, ``network/time`` (simulated, in the run's time unit), ``network/downlink_bits``,
``network/uplink_bits`` and on a cell ``network/energy_j``. The resolved config, flattened to
``a.b.c`` keys, goes in as hyper-parameters, with the final numbers as their metrics.

Trackers take integer steps only, so the accuracy against another x axis (``steps``) is its
own pair of series whose step is that axis in a stated integer unit: ``accuracy_vs_time_ms``
(milliseconds, on a cell) or ``accuracy_vs_time_mTdl`` (thousandths of ``T_dl``),
``accuracy_vs_bits`` (downlink + uplink bits), ``accuracy_vs_energy_uJ`` (microjoules, all
devices; runs on a cell only), each ``/mean`` and ``/worst``.
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


def logged_series(run: RunCurve, steps: tuple[str, ...] = ("round",)):
    """Every (tag, step, value) a tracker receives for ``steps``; an unevaluated number (NaN) is
    left out, never logged as a value."""
    for axis in steps:
        if axis == "round":
            series = [(tag, run.rounds, values) for tag, values in round_series(run).items()]
        else:
            found = step_series(run, axis)
            series = [] if found is None else [(f"{found[0]}/{name}", found[1], values) for name, values in
                                               (("mean", run.mean_accuracy), ("worst", run.worst_accuracy))]
        for tag, positions, values in series:
            for step, value in zip(positions, values):
                if value == value:
                    yield tag, step, value


def final_metrics(run: RunCurve) -> dict[str, float]:
    numbers = {key: run.summary.get(key) for key in ("final_mean_accuracy", "final_worst_accuracy", "simulated_time")}
    return {f"final/{key}": float(value) for key, value in numbers.items() if isinstance(value, (int, float))}


def write_tensorboard(run: RunCurve, folder: Path, steps: tuple[str, ...] = ("round",)) -> None:
    """One TensorBoard log folder for one run (the scalars, then the hparams summary)."""
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(log_dir=str(folder)) as writer:
        for tag, step, value in logged_series(run, steps):
            writer.add_scalar(tag, value, step)
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
        for tag, step, value in logged_series(run, steps):
            mlflow.log_metric(tag.replace("/", "_"), value, step=step)
        mlflow.log_metrics({key.replace("/", "_"): value for key, value in final_metrics(run).items()})
        return active.info.run_id


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
