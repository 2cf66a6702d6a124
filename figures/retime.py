"""Re-time a finished run on another network without retraining (journal Fig. 6 from one run).

The learning does not depend on the network when every device arrives (no deadline), so the
recorded plans, simulated again on another system, give the run's curve on that system.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from figures.results import ResultError, RunCurve, read_run
from netsim import NetworkSystem, RoundPlan, retime_plans


def retimed_curve(folder: str | Path, system: NetworkSystem, rng: np.random.Generator) -> RunCurve:
    """The run's curve with times from ``system`` (time in units of its ``T_dl``)."""
    curve = read_run(folder)
    if curve.config["system"].get("deadline") is not None:
        raise ResultError(f"{folder} ran with a deadline: its learning depends on the network, re-run it instead")
    try:
        lines = (Path(folder) / "plans.jsonl").read_text().splitlines()
        plans = [RoundPlan.from_dict(p) if p else None for p in (json.loads(line)["plan"] for line in lines)]
    except (OSError, ValueError, KeyError) as error:
        raise ResultError(f"{folder} has no readable plans.jsonl ({error})") from None
    ends = retime_plans(plans, system, float(curve.config["model"]["bits"]), rng)
    return dataclasses.replace(curve, time=[ends[r] / system.t_dl for r in curve.rounds])
