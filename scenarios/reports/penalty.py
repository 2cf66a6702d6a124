"""The weakest-member penalty of runs on a physical cell: their downlink seconds per round
against the normalized model's ``T_dl`` per model sent, ``T_dl`` being the cell's mean unicast
airtime of one model (a k-stream round costs ``k T_dl`` there)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scenarios.records.result_folder import read_config, read_summary, read_table
from netsim.radio.physical import PhysicalSystem, channel_seeds
from scenarios.errors import UsageError
from scenarios.definitions.seeds import seed_streams


def cell_network(config: dict):
    """The run's cell as it ran: its system, layout (from the run seed) and planning samples."""
    system = PhysicalSystem.from_dict(config["system"])
    layout_seq, _, planning_seq = channel_seeds(seed_streams(int(config["seed"])).network)
    samples = config["device_samples_per_update"]
    layout = system.cell.place(len(samples), np.random.default_rng(layout_seq))
    return system.network(layout, samples, np.random.default_rng(planning_seq))


def downlink_penalty(folder: str | Path) -> dict:
    """One run's downlink per round (rounds 1.. : the set-up round 0 left out) against the
    normalized model's ``k T_dl``. ``T_dl`` is the mean over devices of each one's unicast airtime
    of a model (``multicast_airtime_s_per_bit`` of the device alone): a device in downlink outage
    on every one of the base station's fading samples has an infinite one, so ``T_dl``, the
    normalized downlink, the penalty and the broadcast over ``T_dl`` are undefined (None, with
    ``undefined_why`` saying why), never 0; so is the penalty of a run that sent no model after
    its set-up round."""
    folder = Path(folder)
    summary, config = read_summary(folder), read_config(folder)
    try:
        downlinks = [row for row in read_table(folder, "trace.csv") if row["kind"] == "downlink"]
    except KeyError as error:
        raise UsageError(f"{folder} is not a result folder ({error.__class__.__name__}: {error})") from None
    if config.get("system", {}).get("kind") != "physical":
        raise UsageError(f"{folder} did not run on a physical cell (system {config.get('system', {}).get('name')!r})")
    rounds = int(config["rounds"])
    model_bits = float(config["model"]["bits"])
    seconds = np.zeros(rounds + 1)
    models = np.zeros(rounds + 1)
    for row in downlinks:
        r = int(row["round"])
        seconds[r] += float(row["end"]) - float(row["start"])
        models[r] += float(row["bits"]) / model_bits
    network = cell_network(config)
    devices = len(config["device_samples_per_update"])
    unicast_s = model_bits * np.array([network.multicast_airtime_s_per_bit((d,)) for d in range(devices)])
    broadcast_s = model_bits * network.multicast_airtime_s_per_bit(tuple(range(devices)))
    measured = float(seconds[1:].mean())
    models_per_round = float(models[1:].mean())
    never = [d for d in range(devices) if not np.isfinite(unicast_s[d])]
    if never:
        where = ("at its mean SNR (no fading)" if network.planning_efficiency is None
                 else f"on every one of the base station's {network.planning_efficiency.shape[0]:,} fading samples")
        t_dl = normalized = penalty = None
        why = (f"T_dl undefined: device{'s' if len(never) > 1 else ''} {', '.join(map(str, never))} in downlink outage "
               f"{where} (an infinite unicast airtime)")
    else:
        t_dl = float(unicast_s.mean())
        normalized = models_per_round * t_dl
        penalty = measured / normalized if normalized > 0 else None
        why = None if normalized > 0 else "penalty undefined: no model sent after the set-up round"
    return {
        "label": summary["label"],
        "system": config["system"]["name"],
        "seed": summary["seed"],
        "formation": config["algorithm_options"].get("formation"),
        "streams": summary["streams"],
        "models_per_round": models_per_round,
        "downlink_s_per_round": measured,
        "t_dl_s": t_dl,
        "broadcast_s": broadcast_s if np.isfinite(broadcast_s) else None,
        "normalized_downlink_s_per_round": normalized,
        "penalty": penalty,
        "undefined_why": why,
        "simulated_time_s": summary["simulated_time"],
        "final_mean_accuracy": summary["final_mean_accuracy"],
        "final_worst_accuracy": summary["final_worst_accuracy"],
        "energy_j": summary.get("energy_j"),
        "formation_airtime_ratio": summary.get("formation_airtime_ratio"),
        "result_dir": str(folder),
    }
