"""``fl-cosim round-time``: the network alone, simulated round time against the closed form
(normalized systems), or in seconds and joules on a physical cell preset."""

from __future__ import annotations

import numpy as np

from contract import RoundPlan, Stream
from netsim import NetworkSystem, expected_round_time_barrier, simulate_rounds
from scenarios.cli.common import add_declared, add_json, parse_options
from scenarios.errors import UsageError
from scenarios.definitions.settings import MAX_ROUND_TIME_DEVICES, MAX_ROUND_TIME_EVENTS, NETWORK_SETTINGS, RUN_SETTINGS, Setting

MODEL_BITS = 1.0  # payloads are whole models, so time is in T_dl units whatever the model size
CELL_MODEL_BITS = 1e6  # on a cell: a 1 Mbit model each way unless --model-bits says otherwise
MAX_MODEL_BITS = 10**15  # 125 TB: past any model; larger sizes overflow a round's seconds and joules
CELL_SAMPLES = 100.0  # on a cell: training samples per local update (CPU cycles = cycles_per_sample x samples)


def add_parser(subparsers) -> None:
    from scenarios.definitions.systems import DEFAULT_SYSTEM

    parser = subparsers.add_parser(
        "round-time",
        help="simulated round time of the network alone vs the closed form",
        description="Simulate rounds of N devices served by M model-sized multicast streams, each device "
        "computing T_min + Exp(mu) and uploading one model; compare the mean with "
        "E[T_round] = T_dl (M + rho N) + T_min + H_N / mu (barrier mode; pipelined is never slower).",
    )
    parser.add_argument("--devices", type=int, required=True, help="number of devices N")
    parser.add_argument("--streams", type=int, default=1, help="number of downlink streams M (1..N; default 1)")
    parser.add_argument("--system", default=DEFAULT_SYSTEM,
                        help=f"a named system (see 'fl-cosim list'; default {DEFAULT_SYSTEM}): a normalized one gives "
                        "--rho, --t-min and --inv-mu their defaults; a cell preset simulates the cell (seconds, joules)")
    add_declared(parser, "rho", "t_min", "inv_mu", "radio")  # as run has them
    parser.add_argument("--model-bits", type=float,
                        help=f"model size in bits on a cell (default {CELL_MODEL_BITS:g}; at most {MAX_MODEL_BITS:g}); "
                        "a normalized system counts in models, so it refuses --model-bits")
    add_declared(parser, "mode", mode="barrier")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds to simulate (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    add_json(parser)


def round_plan(devices: int, streams: int, model_bits: float = MODEL_BITS) -> RoundPlan:
    """Devices dealt round-robin into ``streams`` groups, one model each way."""
    groups = [tuple(range(s, devices, streams)) for s in range(streams)]
    return RoundPlan(tuple(Stream(g, model_bits) for g in groups), {d: model_bits for d in range(devices)}, tuple(range(devices)))


def execute(args):
    Setting(int, low=1, high=MAX_ROUND_TIME_DEVICES).check("--devices", args.devices)
    if not 1 <= args.streams <= args.devices:
        raise UsageError(f"--streams must be in 1..{args.devices} (the devices), got {args.streams}")
    RUN_SETTINGS["rounds"].check("--rounds", args.rounds)
    if args.devices * args.rounds > MAX_ROUND_TIME_EVENTS:
        raise UsageError(f"--devices x --rounds must be at most {MAX_ROUND_TIME_EVENTS:,} (about a minute of simulation), "
                         f"got {args.devices * args.rounds:,}")
    RUN_SETTINGS["seed"].check("--seed", args.seed)
    from scenarios.definitions.cells import CELLS
    from scenarios.definitions.systems import SYSTEMS, SystemPreset, system_names

    if args.system in CELLS:  # the cell presets' own command: seconds, joules, outages
        return cell_round_time(args)
    if args.system not in SYSTEMS:
        raise UsageError(f"unknown system {args.system!r}; choose from: {', '.join(system_names())}")
    if args.radio:
        raise UsageError("--radio applies to the physical cell presets (--system PRESET)")
    if args.model_bits is not None:  # a normalized system's payloads are whole models (T_dl each)
        raise UsageError(f"--model-bits applies to the physical cell presets; {args.system} counts time in T_dl per model")
    preset = SYSTEMS[args.system]
    for key in ("rho", "t_min", "inv_mu"):
        flag = "--" + key.replace("_", "-")
        if getattr(args, key) is None:
            if not isinstance(preset, SystemPreset):
                raise UsageError(f"{args.system} is a plugin system: give --rho, --t-min and --inv-mu")
            setattr(args, key, getattr(preset, key))
        NETWORK_SETTINGS[key].check(flag, getattr(args, key))
    try:
        system = NetworkSystem(rho=args.rho, t_min=args.t_min, inv_mu=args.inv_mu, mode=args.mode)
    except ValueError as error:
        raise UsageError(str(error)) from None
    from scenarios.definitions.seeds import seed_streams

    rng = np.random.default_rng(seed_streams(args.seed).network)  # the compute draws of a run of this seed
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
    text = (f"{args.system} (rho={args.rho:g}, T_min={args.t_min:g}, 1/mu={args.inv_mu:g}), {args.mode}: "
            f"simulated mean {data['simulated_mean']:.4f} T_dl (std {data['simulated_std']:.4f}, "
            f"{args.rounds} rounds); closed form (barrier) {closed:.4f} T_dl")
    return data, text


def cell_round_time(args):
    """Rounds of N devices on a cell preset: the layout of a run of this seed, fading per round,
    ``--streams`` multicast groups of one model each, every device computing ``CELL_SAMPLES``
    samples and uploading one model; mean round time (s), energy (J) and outages."""
    from scenarios.definitions.cells import get_cell_system
    from scenarios.definitions.seeds import seed_streams

    for flag in ("rho", "t_min", "inv_mu"):
        if getattr(args, flag) is not None:
            raise UsageError(f"--{flag.replace('_', '-')} applies to the normalized systems, not to the cell {args.system!r}")
    if args.model_bits is None:
        args.model_bits = CELL_MODEL_BITS
    Setting(float, low=0, high=MAX_MODEL_BITS, low_open=True).check("--model-bits", args.model_bits)
    system = get_cell_system(args.system, args.mode, None, parse_options(args.radio, "--radio"))
    network_seq = seed_streams(args.seed).network
    try:  # as a run binds it: the layout of this seed, and on a cell in time its motion, availability and batteries
        network, channel_rng = system.bind(np.full(args.devices, CELL_SAMPLES), network_seq)
    except ValueError as error:
        raise UsageError(str(error)) from None
    plan = round_plan(args.devices, args.streams, args.model_bits)
    records, _ = simulate_rounds([plan] * args.rounds, network, args.model_bits, np.random.default_rng(network_seq),
                                 keep_trace=False, channel_rng=channel_rng)
    durations = np.array([r.duration for r in records])
    energy = np.array([sum(r.energy_j.values()) for r in records]) / args.devices
    arrived = np.array([len(r.outcome.arrived) for r in records]) / args.devices
    data = {
        "system": args.system,
        "simulated_mean_s": float(durations.mean()),
        "simulated_std_s": float(durations.std(ddof=1)) if durations.size > 1 else 0.0,
        "energy_j_per_device_round": float(energy.mean()),
        "arrived_fraction": float(arrived.mean()),
        "rounds": args.rounds,
        "mode": args.mode,
        "model_bits": args.model_bits,
        "duplex": system.duplex,
        "downlink_share": system.shares[0],
        "uplink_share": system.shares[1],
    }
    text = (f"{args.system}, {args.mode}, {args.devices} devices, {args.streams} streams: simulated mean "
            f"{data['simulated_mean_s']:.4g} s (std {data['simulated_std_s']:.3g} s, {args.rounds} rounds), "
            f"{data['energy_j_per_device_round']:.3g} J per device and round, {data['arrived_fraction']:.1%} of updates arrived")
    return data, text
