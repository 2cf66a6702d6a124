"""``fl-cosim round-time`` under each ``link_abstraction`` over seeds: the table of
``docs/link-layer.md`` ("The link abstractions in the cell's rounds"), each figure mean +- sample
standard deviation [min-max] over the seeds (not a test).

    python3 -m benchmarks.link_abstractions [--system umi-3.5ghz] [--devices 20] [--rounds 5] [--seeds 0 1 2 3 4]
        [--uplink-access tdma|pf] [--harq] [--streams]

Each cell of the table is one ``fl-cosim round-time --system S --devices N --rounds R --seed SEED
--radio link_abstraction=L --json`` per seed (barrier, 1 Mbit each way, 100 samples of compute
per device: ``benchmarks.round_time_seeds``). ``--harq`` adds what the ``nr-harq`` uploads did over
the same rounds (the same network and plans as ``round-time``, run here): the share of transport
blocks whose first transmission failed (the outer loop aims at 10%), transmissions per block,
blocks lost after four, the mean MCS and the uplink slots per upload; then the first
transmissions split: blocks sent at MCS 0 although even MCS 0's first transmission misses the 10%
target on their grant (near outage, carried by HARQ's combining: the outer loop cannot help them),
the other blocks, and, of those, what the outer loop expected (the mean of their first
transmissions' BLERs); with the devices and uploads having any block of the first kind.
``--streams``: the round's broadcast under ``nr`` and ``nr-harq`` (its airtime; the ``nr-harq``
streams' MCS, transmissions per block and blocks lost after four).
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.round_time_seeds import round_time
from benchmarks.spread import spread

ABSTRACTIONS = ("shannon", "nr", "nr-harq", "attenuated-shannon")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", default="umi-3.5ghz")
    parser.add_argument("--devices", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--uplink-access", choices=("tdma", "pf"), default="tdma",
                        help="the uplink's access (pf: the proportional-fair scheduler; each row adds --radio uplink_access=pf)")
    parser.add_argument("--harq", action="store_true", help="only the nr-harq uploads' table")
    parser.add_argument("--streams", action="store_true", help="only the streams' table: nr against nr-harq")
    args = parser.parse_args(argv)
    access = [] if args.uplink_access == "tdma" else [f"uplink_access={args.uplink_access}"]
    if access and (args.harq or args.streams):
        parser.error("--uplink-access pf gives the main table only (--harq and --streams follow TDMA uploads)")
    if args.harq:
        harq_table(args)
        return
    if args.streams:
        stream_table(args)
        return
    print(f"`fl-cosim round-time --system {args.system} --devices {args.devices} --rounds {args.rounds} --radio "
          f"link_abstraction=L{''.join(' --radio ' + a for a in access)}`, seeds {' '.join(map(str, args.seeds))}: mean +- sample std over the seeds [min-max]\n")
    print("| `link_abstraction` | mean round (s) | energy per device and round (J) | updates arrived |")
    print("| --- | --- | --- | --- |")
    for name in ABSTRACTIONS:
        rs = [round_time(args.system, args.devices, args.rounds, s, [f"link_abstraction={name}"] + access) for s in args.seeds]
        label = f"`{name}`" + (" (default)" if name == "nr-harq" else "")
        print(f"| {label} | {spread([r['simulated_mean_s'] for r in rs], 2)} | "
              f"{spread([r['energy_j_per_device_round'] for r in rs], 3)} | "
              f"{spread([r['arrived_fraction'] for r in rs], 1, 100, '%')} |", flush=True)


def harq_uploads(system_name: str, devices: int, rounds: int, seed: int) -> list:
    """``(UploadResult, uplink slots, device)`` of every nr-harq upload sent in ``round-time``'s rounds of this seed."""
    from netsim import simulate_rounds
    from netsim.radio import harq_uplink
    from scenarios.cli.round_time import CELL_MODEL_BITS, CELL_SAMPLES, round_plan
    from scenarios.definitions.cells import get_cell_system
    from scenarios.definitions.seeds import seed_streams

    system = get_cell_system(system_name, overrides={"link_abstraction": "nr-harq"})
    network_seq = seed_streams(seed).network
    network, channel_rng = system.bind(np.full(devices, CELL_SAMPLES), network_seq)
    slot_s = harq_uplink.link_config(system.subcarrier_spacing_hz).timing.slot_s
    sent = []
    commit = harq_uplink.LinkState.commit

    def recording(state, device, transfer):
        sent.append((transfer.result, transfer.result.completion_s / slot_s, device))
        commit(state, device, transfer)

    harq_uplink.LinkState.commit = recording
    try:
        simulate_rounds([round_plan(devices, 1, CELL_MODEL_BITS)] * rounds, network, CELL_MODEL_BITS,
                        np.random.default_rng(network_seq), keep_trace=False, channel_rng=channel_rng)
    finally:
        harq_uplink.LinkState.commit = commit
    return sent


def harq_table(args) -> None:
    print("\n`nr-harq` uploads in the same rounds, pooled over each seed's uploads, then mean +- sample std over the seeds [min-max]:\n")
    print("| first transmissions failed | transmissions per block | blocks lost after 4 | mean MCS | uplink slots per upload |")
    print("| --- | --- | --- | --- | --- |")
    rows, split = [], []
    for seed in args.seeds:
        results = harq_uploads(args.system, args.devices, args.rounds, seed)
        tx = np.concatenate([r.transmissions for r, _, _ in results])
        rows.append((float(np.mean(tx > 1)), float(tx.mean()), float(np.mean(~np.concatenate([r.delivered for r, _, _ in results]))),
                     float(np.concatenate([r.mcs for r, _, _ in results]).mean()), float(np.mean([slots for _, slots, _ in results]))))
        first = np.concatenate([r.first_bler for r, _, _ in results])
        below = np.concatenate([(r.mcs == 0) & (r.first_bler > 0.1) for r, _, _ in results])  # MCS 0 missing its target
        devices = {d for r, _, d in results if np.any((r.mcs == 0) & (r.first_bler > 0.1))}
        uploads = sum(bool(np.any((r.mcs == 0) & (r.first_bler > 0.1))) for r, _, _ in results)
        split.append((float(below.mean()), float(np.mean(tx[below] > 1)) if below.any() else None,
                      float(np.mean(tx[~below] > 1)), float(first[~below].mean()), len(devices), uploads, len(results)))
    columns = list(zip(*rows))
    print(f"| {spread(columns[0], 1, 100, '%')} | {spread(columns[1], 3)} | {spread(columns[2], 2, 100, '%')} | "
          f"{spread(columns[3], 1)} | {spread(columns[4], 0)} |")
    print("\nThe first transmissions split, per seed: blocks at MCS 0 whose first transmission misses 10% (near outage) and the others:\n")
    print("| seed | blocks near outage | their first transmissions failed | other blocks' first transmissions failed "
          "| expected (mean BLER) | devices near outage | uploads near outage / all |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for seed, (share, failed, others, expected, devices, uploads, total) in zip(args.seeds, split):
        failed_text = "none sent" if failed is None else f"{100 * failed:.1f}%"  # no block near outage: no share of them to give
        print(f"| {seed} | {100 * share:.1f}% | {failed_text} | {100 * others:.1f}% | {100 * expected:.1f}% | "
              f"{devices} of {args.devices} | {uploads} / {total} |")
    columns = list(zip(*split))
    print(f"| all | {spread(columns[0], 1, 100, '%')} | | {spread(columns[2], 1, 100, '%')} | {spread(columns[3], 1, 100, '%')} | | |")



def round_streams(system_name: str, devices: int, rounds: int, seed: int, abstraction: str) -> tuple[list, list]:
    """(each round's stream airtime in s, the nr-harq streams' ``StreamResult``) of ``round-time``'s rounds of this seed."""
    from netsim import simulate_rounds
    from netsim.radio import harq_downlink
    from scenarios.cli.round_time import CELL_MODEL_BITS, CELL_SAMPLES, round_plan
    from scenarios.definitions.cells import get_cell_system
    from scenarios.definitions.seeds import seed_streams

    system = get_cell_system(system_name, overrides={"link_abstraction": abstraction})
    network_seq = seed_streams(seed).network
    network, channel_rng = system.bind(np.full(devices, CELL_SAMPLES), network_seq)
    streams, serve = [], harq_downlink.stream

    def recording(*args, **kwargs):
        streams.append(serve(*args, **kwargs))
        return streams[-1]

    harq_downlink.stream = recording
    try:
        _, trace = simulate_rounds([round_plan(devices, 1, CELL_MODEL_BITS)] * rounds, network, CELL_MODEL_BITS,
                                   np.random.default_rng(network_seq), channel_rng=channel_rng)
    finally:
        harq_downlink.stream = serve
    return [e.end - e.start for e in trace if e.kind == "downlink"], streams


def stream_table(args) -> None:
    print(f"\nThe broadcast of the same rounds ({args.devices} listeners), per seed: its mean airtime under `nr` and "
          "`nr-harq`, and the `nr-harq` streams' blocks:\n")
    print("| seed | `nr` airtime (ms) | `nr-harq` airtime (ms) | mean MCS | transmissions per block | blocks lost after 4 |")
    print("| --- | --- | --- | --- | --- | --- |")
    rows = []
    for seed in args.seeds:
        curve, _ = round_streams(args.system, args.devices, args.rounds, seed, "nr")
        harq, results = round_streams(args.system, args.devices, args.rounds, seed, "nr-harq")
        tx = np.concatenate([r.transmissions for r in results])
        rows.append((1e3 * float(np.mean(curve)), 1e3 * float(np.mean(harq)), float(np.mean([r.mcs for r in results])),
                     float(tx.mean()), float(np.mean(~np.concatenate([r.delivered for r in results])))))
        print(f"| {seed} | {rows[-1][0]:.1f} | {rows[-1][1]:.1f} | {rows[-1][2]:.1f} | {rows[-1][3]:.3f} | {100 * rows[-1][4]:.2f}% |",
              flush=True)
    columns = list(zip(*rows))
    print(f"| all | {spread(columns[0], 1)} | {spread(columns[1], 1)} | {spread(columns[2], 1)} | {spread(columns[3], 3)} | "
          f"{spread(columns[4], 2, 100, '%')} |")


if __name__ == "__main__":
    main()
