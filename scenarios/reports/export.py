"""Finished result folders to experiment trackers: TensorBoard event files, and MLflow where installed.

Reads folders only (every file checked against its checksum), never retrains. Each evaluated
round is one step: ``accuracy/mean``, ``accuracy/worst``, and the network's numbers as their
own series, ``network/time`` (simulated, in the run's time unit), ``network/downlink_bits``,
``network/uplink_bits`` and on a cell ``network/energy_j``. The resolved config, flattened to
``a.b.c`` keys, goes in as hyper-parameters, with the final numbers as their metrics.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from scenarios.result_folder import RunCurve, read_run


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


def final_metrics(run: RunCurve) -> dict[str, float]:
    numbers = {key: run.summary.get(key) for key in ("final_mean_accuracy", "final_worst_accuracy", "simulated_time")}
    return {f"final/{key}": float(value) for key, value in numbers.items() if isinstance(value, (int, float))}


def write_tensorboard(run: RunCurve, folder: Path) -> None:
    """One TensorBoard log folder for one run (the scalars, then the hparams summary)."""
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(log_dir=str(folder)) as writer:
        for tag, values in round_series(run).items():
            for step, value in zip(run.rounds, values):
                if value == value:  # an unevaluated number (NaN) is left out, never logged as a value
                    writer.add_scalar(tag, value, step)
        writer.add_hparams(flat_config(run.config), final_metrics(run), run_name="hparams")


def export_tensorboard(result_dirs: list[str], out: Path, force: bool) -> list[Path]:
    """Every run read (and verified) first, then one log folder each, ``OUT/RUN_FOLDER_NAME``, written
    under a temporary name and renamed into place; an existing log folder is replaced only with ``force``."""
    runs = [read_run(folder) for folder in result_dirs]
    targets = [out / Path(run.folder).name for run in runs]
    if not force:
        existing = [str(target) for target in targets if target.exists()]
        if existing:
            raise FileExistsError(existing[0])
    out.mkdir(parents=True, exist_ok=True)
    for run, target in zip(runs, targets):
        partial = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=out))
        try:
            write_tensorboard(run, partial)
            os.chmod(partial, 0o777 & ~_umask())
            if target.exists():
                shutil.rmtree(target)
            partial.rename(target)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return targets


def export_mlflow(result_dirs: list[str], tracking_uri: str, experiment: str) -> list[str]:
    """One MLflow run per result folder: the flattened config as params, the series as step metrics."""
    import mlflow

    runs = [read_run(folder) for folder in result_dirs]
    try:
        mlflow.set_tracking_uri(tracking_uri)
        mlflow.set_experiment(experiment)
        return [_mlflow_run(mlflow, run) for run in runs]
    except mlflow.exceptions.MlflowException as error:
        raise TrackerError(f"MLflow at {tracking_uri!r} refused the export: {str(error).splitlines()[0]}") from None


class TrackerError(RuntimeError):
    """A tracker refused what was sent; the message is one line."""


def _mlflow_run(mlflow, run: RunCurve) -> str:
    """One MLflow run; MLflow's metric names take no '/', so ``accuracy/mean`` is ``accuracy_mean``."""
    with mlflow.start_run(run_name=Path(run.folder).name) as active:
        mlflow.log_params({key: str(value)[:500] for key, value in flat_config(run.config).items()})
        for tag, values in round_series(run).items():
            for step, value in zip(run.rounds, values):
                if value == value:
                    mlflow.log_metric(tag.replace("/", "_"), value, step=step)
        mlflow.log_metrics({key.replace("/", "_"): value for key, value in final_metrics(run).items()})
        return active.info.run_id


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
