"""``fl-cosim round-time``: the network alone, simulated round time against the closed form."""

from __future__ import annotations

import numpy as np

from netsim import NetworkSystem, RoundPlan, Stream, expected_round_time_barrier, simulate_rounds
from scenarios.commands.common import add_json
from scenarios.errors import UsageError
from scenarios.settings import MAX_ROUND_TIME_DEVICES, MAX_ROUND_TIME_EVENTS, NETWORK_SETTINGS, RUN_SETTINGS, Setting

MODEL_BITS = 1.0  # payloads are whole models, so time is in T_dl units whatever the model size


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "round-time",
        help="simulated round time of the network alone vs the closed form",
        description="Simulate rounds of N devices served by M model-sized multicast streams, each device "
        "computing T_min + Exp(mu) and uploading one model; compare the mean with "
        "E[T_round] = T_dl (M + rho N) + T_min + H_N / mu (barrier mode; pipelined is never slower).",
    )
    parser.add_argument("--devices", type=int, required=True, help="number of devices N")
    parser.add_argument("--streams", type=int, required=True, help="number of downlink streams M (1..N)")
    parser.add_argument("--rho", type=float, required=True, help="T_ul / T_dl")
    parser.add_argument("--t-min", type=float, required=True, help="minimum compute time, in T_dl")
    parser.add_argument("--inv-mu", type=float, required=True, help="mean extra compute delay 1/mu, in T_dl (0: reliable)")
    parser.add_argument("--mode", choices=("barrier", "pipelined"), default="barrier", help="timing mode (default barrier)")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds to simulate (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    add_json(parser)


def round_plan(devices: int, streams: int) -> RoundPlan:
    """Devices dealt round-robin into ``streams`` groups, one model each way."""
    groups = [tuple(range(s, devices, streams)) for s in range(streams)]
    return RoundPlan(tuple(Stream(g, MODEL_BITS) for g in groups), {d: MODEL_BITS for d in range(devices)}, tuple(range(devices)))


def execute(args):
    Setting(int, low=1, high=MAX_ROUND_TIME_DEVICES).check("--devices", args.devices)
    if not 1 <= args.streams <= args.devices:
        raise UsageError(f"--streams must be in 1..{args.devices} (the devices), got {args.streams}")
    RUN_SETTINGS["rounds"].check("--rounds", args.rounds)
    if args.devices * args.rounds > MAX_ROUND_TIME_EVENTS:
        raise UsageError(f"--devices x --rounds must be at most {MAX_ROUND_TIME_EVENTS:,} (about a minute of simulation), "
                         f"got {args.devices * args.rounds:,}")
    RUN_SETTINGS["seed"].check("--seed", args.seed)
    for key in ("rho", "t_min", "inv_mu"):
        NETWORK_SETTINGS[key].check("--" + key.replace("_", "-"), getattr(args, key))
    try:
        system = NetworkSystem(rho=args.rho, t_min=args.t_min, inv_mu=args.inv_mu, mode=args.mode)
    except ValueError as error:
        raise UsageError(str(error)) from None
    rng = np.random.default_rng(np.random.SeedSequence(args.seed))
    records, _ = simulate_rounds([round_plan(args.devices, args.streams)] * args.rounds, system, MODEL_BITS, rng,
                                 keep_trace=False)
    durations = np.array([r.duration for r in records])
    closed = expected_round_time_barrier(args.streams, args.devices, args.rho, args.t_min, args.inv_mu)
    data = {
        "simulated_mean": float(durations.mean()),
        "simulated_std": float(durations.std(ddof=1)) if durations.size > 1 else 0.0,
        "closed_form": closed,
        "rounds": args.rounds,
        "mode": args.mode,
    }
    text = (f"{args.mode}: simulated mean {data['simulated_mean']:.4f} T_dl (std {data['simulated_std']:.4f}, "
            f"{args.rounds} rounds); closed form (barrier) {closed:.4f} T_dl")
    return data, text
