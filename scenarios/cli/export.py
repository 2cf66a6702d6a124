"""``fl-cosim export``: finished result folders to TensorBoard event files (and MLflow where installed)."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

from scenarios.cli.common import add_json
from scenarios.errors import UsageError
from scenarios.reports.export import STEP_AXES


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="write finished result folders to TensorBoard (and MLflow)",
        description="Reads complete result folders (every file matching its checksum; never retrains) and "
        "writes, per run, TensorBoard event files under OUT/RUN_FOLDER: per evaluated round the mean and "
        "worst accuracy and, as their own series, simulated time, downlink and uplink bits (and energy on "
        "a cell); with --step, also (besides those) the accuracy against simulated time, bits or energy as "
        "series whose step is that axis in an integer unit (trackers take integer steps); a custom-scalars "
        "layout whose titles name each series' unit and x axis; every event at its round's simulated time "
        "(TensorBoard's Relative axis: seconds on a cell, T_dl otherwise); the resolved config as "
        "hparams. With --mlflow URI, also one MLflow run per folder (pip install mlflow), with a unit.METRIC "
        "tag per metric and the simulated time as each value's timestamp.",
    )
    parser.add_argument("result_dirs", nargs="+", metavar="RESULT_DIR")
    parser.add_argument("--tensorboard", default="results/tensorboard", metavar="OUT",
                        help="TensorBoard log folder (default results/tensorboard); view with: tensorboard --logdir OUT")
    parser.add_argument("--mlflow", metavar="URI", help="also log to this MLflow tracking URI (e.g. sqlite:///mlflow.db or http://host:5000)")
    parser.add_argument("--experiment", default="fl-cosim", help="MLflow experiment name (default fl-cosim)")
    parser.add_argument("--step", nargs="+", choices=STEP_AXES, default=["round"], metavar="AXIS",
                        help="x axes of the accuracy series besides round (always written), one pair (mean, worst) each: time "
                        "(accuracy_vs_time_ms on a cell, accuracy_vs_time_mTdl: thousandths of T_dl, otherwise), bits "
                        "(accuracy_vs_bits, down + up), energy (accuracy_vs_energy_uJ, all devices; runs on a cell)")
    parser.add_argument("--force", action="store_true", help="replace existing TensorBoard log folders of these runs")
    add_json(parser)


def execute(args):
    from scenarios.records.atomic import check_output_dir, make_output_dir, output_name
    from scenarios.records.result_folder import ResultError
    from scenarios.reports.export import TrackerError, export_mlflow, export_tensorboard

    if importlib.util.find_spec("tensorboard") is None:
        raise UsageError("export needs the tensorboard package: pip install 'fl-cosim[tracking]'")
    if args.mlflow is not None and importlib.util.find_spec("mlflow") is None:
        raise UsageError("--mlflow needs the mlflow package: pip install mlflow")
    if not args.tensorboard:
        raise UsageError("--tensorboard must name a folder, got ''")
    out = check_output_dir(Path(output_name(args.tensorboard, "--tensorboard")))
    failed_threads: list[BaseException] = []  # the event writers' threads: their error is this command's, in one line
    hook, threading.excepthook = threading.excepthook, lambda failed: failed_threads.append(failed.exc_value)
    try:
        make_output_dir(out)  # created here: removed again if the export fails and leaves it empty
        steps = tuple(dict.fromkeys(args.step))
        folders = export_tensorboard(args.result_dirs, out, args.force, steps)  # each writer joins its thread when it closes
        mlflow_runs = export_mlflow(args.result_dirs, args.mlflow, args.experiment, steps) if args.mlflow else []
    except (ResultError, TrackerError) as error:
        raise UsageError(str(error)) from None
    except FileExistsError as error:
        raise UsageError(f"{error.filename or error.args[0]!r} exists; give another --tensorboard or --force to replace it") from None
    except OSError as error:
        raise UsageError(f"cannot write {args.tensorboard!r}: {error.strerror or error}") from None
    finally:
        threading.excepthook = hook
    if failed_threads:
        error = failed_threads[0]
        raise UsageError(f"cannot write {args.tensorboard!r}: {getattr(error, 'strerror', None) or error}")
    text = "\n".join([f"wrote {folder}" for folder in folders] + [f"mlflow run {run}" for run in mlflow_runs])
    return {"tensorboard": [str(folder) for folder in folders], "mlflow_runs": mlflow_runs}, text
