"""The timelines drawn in docs/network-model.md, regenerated: three devices, T_dl = T_ul = 1,
fixed compute times, under FedAsync (``netsim.clock.buffered``) and in synchronous pipelined rounds
(``netsim.transport.reference``), drawn from their traces in ASCII (4 characters per T_dl).

Usage: python3 -m benchmarks.timelines
"""

from __future__ import annotations


import numpy as np

from contract import RoundPlan, Stream
from netsim.clock.buffered import Buffered, NetworkOnly, run_buffered
from netsim.clock.engine import simulate_rounds
from netsim.normalized.scripted import Scripted, ScriptedSystem

SCALE = 4  # characters per time unit
COMPUTE = (1, 2, 4, 3, 1.5, 2)  # in the order drawn: device order at a broadcast, then each dispatch


def draw(trace, made, end: int) -> str:
    width = SCALE * end + 1
    rows = {"downlink": [" "] * width, **{f"device {d}": [" "] * width for d in range(3)}}

    def put(row, start, stop, text):
        a, b = round(start * SCALE), min(round(stop * SCALE), width - 1)
        rows[row][a:b] = "[" + text.center(b - a - 2, "-")[:max(b - a - 2, 0)] + "]"

    for e in trace:
        if e.kind == "downlink":
            put("downlink", e.start, e.end, f"v{e.entity}")
        elif e.kind in ("compute", "uplink"):
            put(f"device {e.entity}", e.start, e.end, "c" if e.kind == "compute" else "up")
    server, axis = [" "] * width, [" "] * width
    for version, at in made:
        server[round(at * SCALE):round(at * SCALE) + 2] = f"v{version}"
    for t in range(end + 1):
        axis[t * SCALE:t * SCALE + len(str(t))] = str(t)
    lines = [("time".ljust(10) + "".join(axis)).rstrip()]
    lines += [(name.ljust(10) + "".join(cells)).rstrip() for name, cells in rows.items()]
    return "\n".join(lines + [("server".ljust(10) + "".join(server)).rstrip()])


def main() -> None:
    system = ScriptedSystem(rho=1.0, t_min=0.0, inv_mu=0.0, script=Scripted(COMPUTE + (9,) * 3))
    versions, trace = run_buffered(NetworkOnly(3, 1.0), system, Buffered(1), 4, np.random.default_rng(0))
    print("FedAsync:\n" + draw(trace, [(r.server_round, r.end) for r in versions[1:]], 8))
    system = ScriptedSystem(rho=1.0, t_min=0.0, inv_mu=0.0, script=Scripted(COMPUTE))
    plan = RoundPlan((Stream((0, 1, 2), 1.0),), {0: 1.0, 1: 1.0, 2: 1.0}, (0, 1, 2))
    rounds, trace = simulate_rounds([plan, plan], system, 1.0, np.random.default_rng(0), simulator="processes")
    trace = [e._replace(entity=r) if e.kind == "downlink" else e for r in (0, 1) for e in trace if e.round == r]
    print("\nsynchronous, pipelined:\n" + draw(trace, [(i + 1, r.end) for i, r in enumerate(rounds)], 12))


if __name__ == "__main__":
    main()
