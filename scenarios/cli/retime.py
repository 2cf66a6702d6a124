"""``fl-cosim retime RESULT_DIR... --systems SYSTEM...``: recorded runs re-timed onto other systems, no retraining."""

from __future__ import annotations

from scenarios.cli.common import add_json, table
from scenarios.definitions.settings import TARGET


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "retime",
        help="time (and energy) to a target accuracy of recorded runs on other systems, without retraining",
        description="Re-times each run's recorded plans on each system (its own network stream, so on its own "
        "system the times are its own) and prints, per run and system, the time to the target mean accuracy "
        "(in the system's unit: T_dl, or seconds on a cell) and at the run's end, and on a cell the devices' "
        "energy. A system is a preset with overrides of its declared parameters: wireless-slow-ul:rho=10,mode=barrier, "
        "umi-3.5ghz:downlink_bandwidth_hz=10e6,uplink_bandwidth_hz=10e6. It takes synchronous runs whose learning "
        "did not depend on the timing; refused (one line) otherwise: a run under --orchestrator fedbuff or fedasync "
        "(its dispatches follow the arrivals; it records no round plans), with a deadline, dropped devices, a "
        "network-aware scheduler or a cell in time (battery_j, mean_off_s, availability_trace, speed_kmh); a system "
        "with a deadline, an outage threshold (a cell is re-timed serving every listener) or a cell in time. Writes nothing.",
    )
    parser.add_argument("result_dirs", nargs="+", metavar="RESULT_DIR")
    parser.add_argument("--systems", nargs="+", required=True, metavar="SYSTEM",
                        help="systems to re-time on: NAME or NAME:KEY=VALUE,... (see 'fl-cosim list')")
    parser.add_argument("--target", type=float, help="target mean accuracy (default: 90%% of the best final mean accuracy of the runs)")
    add_json(parser)


def execute(args):
    from scenarios.reports.over_seeds import TIME_FORMATS
    from scenarios.reports.retime import retime_systems, retime_table

    TARGET.check("--target", args.target)
    rows, target = retime_table(args.result_dirs, retime_systems(args.systems), args.target)

    def number(value, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    header = ["run", "system", "unit", "final acc", "time to target", "end time", "energy to target (J)", "energy (J)"]
    body = [[r["label"], r["system"], r["time_unit"], number(r["final_mean_accuracy"], ".3f"),
             number(r["time_to_target"], TIME_FORMATS[r["time_unit"]]), number(r["end_time"], TIME_FORMATS[r["time_unit"]]),
             number(r["energy_to_target_j"], ".4g"), number(r["energy_j"], ".4g")] for r in rows]
    return {"target": target, "rows": rows}, f"target mean accuracy {target} ('-': never reached)\n\n" + table(header, body)
