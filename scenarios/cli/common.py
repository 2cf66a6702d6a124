"""Arguments and parsing helpers shared by several subcommands."""

from __future__ import annotations

from scenarios.errors import UsageError


def add_json(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout (nothing else)")


def add_data_dir(parser) -> None:
    parser.add_argument(
        "--data-dir",
        help="dataset folder (default: $FL_COSIM_DATA, then ~/.cache/fl-cosim/datasets)",
    )


def parse_option(text: str) -> tuple[str, object]:
    """``key=value`` with value parsed as int, float, bool, none, or kept as text."""
    if "=" not in text:
        raise UsageError(f"option {text!r} must look like key=value")
    key, raw = text.split("=", 1)
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return key, lowered == "true"
    if lowered == "none":
        return key, None
    for kind in (int, float):
        try:
            return key, kind(raw)
        except ValueError:
            pass
    return key, raw


def parse_options(texts: list[str], option: str) -> dict:
    """Repeated ``--option``/``--radio`` ``KEY=VALUE`` as a dict; a key given twice is refused
    (the last would silently win)."""
    options: dict = {}
    for text in texts:
        key, value = parse_option(text)
        if key in options:
            raise UsageError(f"{option} {key} is given twice ({options[key]!r} and {value!r}); give it once")
        options[key] = value
    return options


def parse_streams(text: str | None):
    """``--streams``: a positive integer, ``auto`` (Algorithm 2) or ``m`` (one per device)."""
    if text is None or text == "m":
        return None
    if text == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"--streams must be a positive integer, 'auto' or 'm', got {text!r}") from None
    if value < 1:
        raise UsageError(f"--streams must be >= 1, got {value}")
    return value


def table(header: list[str], rows: list[list]) -> str:
    """A plain aligned text table."""
    cells = [header] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def bits(value: float | None) -> str:
    if value is None:  # no number: bits that overflowed in a diverged run
        return "-"
    for unit, scale in (("Gbit", 1e9), ("Mbit", 1e6), ("kbit", 1e3)):
        if value >= scale:
            return f"{value / scale:.2f} {unit}"
    return f"{value:.0f} bit"


def seed_range(args) -> list[int]:
    """``--seed`` and ``--seeds``: the seeds ``seed .. seed + seeds - 1``, the first and last checked."""
    from scenarios.definitions.settings import MAX_SEEDS, RUN_SETTINGS, Setting

    RUN_SETTINGS["seed"].check("--seed", args.seed)
    Setting(int, low=1, high=MAX_SEEDS).check("--seeds", args.seeds)
    RUN_SETTINGS["seed"].check("--seed + --seeds - 1", args.seed + args.seeds - 1)
    return list(range(args.seed, args.seed + args.seeds))


def add_quiet(parser) -> None:
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr (also off under --json)")


def add_run_settings(parser) -> None:
    """The settings ``run`` and ``compare`` share: algorithms and their options, network, rounds."""
    from scenarios.definitions.registry import DEFAULT_SCENARIO
    from scenarios.definitions.systems import DEFAULT_SYSTEM

    parser.add_argument("--scenario", default=DEFAULT_SCENARIO, help=f"scenario name (default {DEFAULT_SCENARIO}; see 'fl-cosim list')")
    parser.add_argument("--streams", help="user-centric stream count: an integer k, 'auto' (Algorithm 2) or 'm' "
                        "(default: m; an error when no algorithm of the run takes streams)")
    parser.add_argument("--lambda", dest="lam", type=float,
                        help="lambda of c(k, s_k) = s_k - lambda k; only with --streams auto (default 0)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="algorithm option, repeatable (e.g. mu=0.5); goes to every algorithm of the run that takes it")
    parser.add_argument("--system", default=DEFAULT_SYSTEM, help=f"network system (default {DEFAULT_SYSTEM}; see 'fl-cosim list')")
    parser.add_argument("--mode", choices=("pipelined", "barrier"), default="pipelined", help="timing mode (default pipelined)")
    parser.add_argument("--deadline", type=float,
                        help="round deadline (T_dl units; seconds on a physical cell); late devices are dropped from aggregation")
    parser.add_argument("--radio", action="append", default=[], metavar="KEY=VALUE",
                        help="override a physical cell preset's parameter, repeatable (e.g. uplink_access=fdma; see 'fl-cosim cell')")
    parser.add_argument("--rho", type=float, help="T_ul / T_dl in place of the system's")
    parser.add_argument("--t-min", type=float, help="minimum compute time in T_dl, in place of the system's")
    parser.add_argument("--inv-mu", type=float, help="mean extra compute delay 1/mu in T_dl, in place of the system's")
    parser.add_argument("--participation", type=float, help="fraction of devices sampled per round (default: the scenario's)")
    parser.add_argument("--devices", type=int, help="number of devices, where the scenario allows it (default: the scenario's)")
    parser.add_argument("--alpha", type=float, help="Dirichlet label-shift alpha, where the scenario allows it (default: the scenario's)")
    parser.add_argument("--rounds", type=int, help="training rounds after the set-up round (default: the scenario's)")
    add_communication(parser)
    parser.add_argument("--eval-every", type=int, default=1, help="evaluate every N rounds (default 1)")
    parser.add_argument("--out", default="results", help="output folder (default ./results)")
    parser.add_argument("--force", action="store_true", help="run again even when an identical finished run exists")
    add_quiet(parser)
    add_training(parser)
    add_data_dir(parser)
    add_json(parser)


def takes(algorithm: str, key: str) -> bool:
    from scenarios.definitions.registry import get_algorithm

    return key in get_algorithm(algorithm).Options.settings()


def route_options(args, variants: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """Each (algorithm, options) variant with the command line's options routed to it:
    ``--option KEY=VALUE`` to every algorithm that takes KEY (an error if none does),
    ``--streams`` to the algorithms that take streams (an error if none does), ``--lambda``
    only with ``--streams auto``. Identical variants are kept once."""
    options = parse_options(args.option, "--option")
    names = [name for name, _ in variants]
    for key in options:
        if not any(takes(name, key) for name in names):
            raise UsageError(f"no algorithm of this run takes option {key!r} (see 'fl-cosim list' for each one's options)")
    streaming = [name for name in names if takes(name, "streams")]
    if args.streams is not None and not streaming:
        raise UsageError(f"--streams applies to algorithms with streams ({', '.join(sorted(_streaming_algorithms()))}); "
                         "none is in this run")
    if args.lam is not None:
        if parse_streams(args.streams) != "auto" and options.get("streams") != "auto":
            raise UsageError("--lambda applies only with --streams auto (Algorithm 2 picks k by lambda)")
        if "lam" in options:
            raise UsageError("give lambda once: --lambda or --option lam=..., not both")
    routed, seen = [], set()
    for name, defaults in variants:
        run_options = {**defaults, **{k: v for k, v in options.items() if takes(name, k)}}
        if name in streaming:
            if args.streams is not None:
                run_options["streams"] = parse_streams(args.streams)
            if args.lam is not None:
                run_options["lam"] = args.lam
        key = (name, tuple(sorted((k, repr(v)) for k, v in run_options.items())))
        if key not in seen:
            seen.add(key)
            routed.append((name, run_options))
    return routed


def _streaming_algorithms() -> list[str]:
    from learning.algorithms import ALGORITHMS

    return [name for name in ALGORITHMS if takes(name, "streams")]


def spec_settings(args) -> dict:
    """The RunSpec fields the shared run settings give (checked when the spec is prepared)."""
    return {"system": args.system, "rounds": args.rounds, "mode": args.mode, "deadline": args.deadline,
            "evaluate_every": args.eval_every, "participation": args.participation, "rho": args.rho,
            "t_min": args.t_min, "inv_mu": args.inv_mu, "training": training_overrides(args), "devices": args.devices,
            "alpha": args.alpha, "radio": parse_options(args.radio, "--radio"),
            "uplink_codec": args.uplink_codec, "downlink_codec": args.downlink_codec, "scheduler": args.scheduler}


def add_communication(parser) -> None:
    """Update codecs and the network's scheduler (scenarios.definitions.communication)."""
    group = parser.add_argument_group("communication (docs/tradeoffs.md)")
    group.add_argument("--uplink-codec", default="none", metavar="CODEC",
                       help="codec of the uploaded model differences: none (default), qsgd[:bits=4,bucket=512], "
                       "topk[:fraction=0.01,ef=0|1], sign[:ef=1] (fedavg, oracle, user-centric)")
    group.add_argument("--downlink-codec", default="none", metavar="CODEC",
                       help="codec of the downlink models (their difference from the last received): as --uplink-codec, "
                       "with ef=0 the default (error feedback is the uplink's)")
    group.add_argument("--scheduler", default="random", metavar="POLICY",
                       help="who takes part each round (--participation of the devices): random (default), best-channel, "
                       "proportional-fair (a cell), age-based, deadline-aware (with --deadline)")


def show_progress(args) -> bool:
    return not (getattr(args, "quiet", False) or getattr(args, "json", False))


def add_training(parser) -> None:
    """Training settings that override the scenario's (recorded in each run's config.json)."""
    from learning.engine import BACKENDS
    from learning.models import INIT_SCHEMES
    from learning.training import OPTIMIZERS

    group = parser.add_argument_group("training settings (default: the scenario's; 'fl-cosim scenario NAME' lists them)")
    group.add_argument("--optimizer", choices=OPTIMIZERS, help="sgd (the paper's text) or adam (the authors' code: per-device state kept across rounds)")
    group.add_argument("--init", choices=INIT_SCHEMES, help="initialization: keras (the authors' code) or torch (PyTorch's defaults)")
    group.add_argument("--lr", type=float, help="local learning rate")
    group.add_argument("--momentum", type=float, help="SGD momentum (0 <= m < 1)")
    group.add_argument("--batch-size", type=int, help="local mini-batch size")
    group.add_argument("--epochs", type=int, help="local epochs per round (E)")
    group.add_argument("--backend", choices=("auto", *BACKENDS), help="training engine: loop (the reference, in this "
                       "process), processes (the reference loop in one worker process per core, the same numbers), batched "
                       "(all devices at once: the GPU path), compiled (batched under torch.compile) or auto (default: batched on a GPU, "
                       "processes on the CPU)")
    group.add_argument("--device", help="where training runs: auto (default: CUDA when present), cpu, cuda[:N]")


def training_overrides(args) -> dict:
    """The training settings given on the command line (``auto`` is resolved with the run's)."""
    keys = ("optimizer", "init", "lr", "momentum", "batch_size", "epochs", "backend", "device")
    return {key: getattr(args, key) for key in keys if getattr(args, key, None) is not None}
