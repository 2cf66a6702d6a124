"""The buffered orchestrators on a shared uplink (FDMA, PF) on a moving cell: the run keeps one
links per model version (drawn at the version's start, read in steps from it, as a synchronous
round's from the round's start) and its shared uplink steps with them (``netsim.clock.buffered``,
``_VersionSteps``). With K = C = N a FedBuff run is the synchronous pipelined run of the same
seeds, event for event, on a moving cell as on a static one."""

import numpy as np
import pytest

from contract import RoundPlan, Stream
from netsim import simulate_rounds
from netsim.clock.buffered import Buffered, NetworkOnly, run_buffered
from netsim.clock.engine import RunOptions
from scenarios.definitions.cells import get_cell_system

KINDS = ("receive", "compute", "uplink", "dropped")


def _umi(radio):
    return get_cell_system("umi-3.5ghz", overrides=radio).bind(np.full(8, 100.0), np.random.SeedSequence(5))


def _event(e):
    return e.kind, e.entity, e.start, e.end, e.bits, e.energy_j, e.reason


@pytest.mark.parametrize("radio", [{"uplink_access": "pf", "speed_kmh": 30.0}, {"uplink_access": "fdma", "speed_kmh": 30.0},
                                   {"uplink_access": "pf", "link_abstraction": "nr-harq", "speed_kmh": 120.0},
                                   {"uplink_access": "fdma", "ul_interference": "clock", "speed_kmh": 30.0}],
                         ids=["pf", "fdma", "nr-harq-pf-120", "fdma-clock"])
def test_fedbuff_k_c_n_on_a_moving_shared_uplink_is_the_synchronous_pipelined_run(radio):
    """Every reception, computation, upload and drop: the same device, times, bits, energy and
    reason. The order is the synchronous run's but for a device that loses its stream mid-way
    (``downlink-outage``), which the buffered run writes at the stream's end before the
    receptions and the synchronous round after them: the events are compared in time order."""
    n, bits = 8, 1e6
    network, channel_rng = _umi(radio)
    plan = RoundPlan((Stream(tuple(range(n)), bits),), {d: bits for d in range(n)}, tuple(range(n)))
    rounds, synchronous = simulate_rounds([plan] * 3, network, bits, np.random.default_rng(5), simulator="processes",
                                          channel_rng=channel_rng)
    network, channel_rng = _umi(radio)
    versions, trace = run_buffered(NetworkOnly(n, bits), network, Buffered(n), 3, np.random.default_rng(5),
                                   RunOptions(channel_rng=channel_rng))
    order = lambda t: sorted((_event(e) for e in t if e.kind in KINDS), key=lambda x: (x[2], x[3], x[1], x[0]))
    assert order(trace) == order(synchronous)
    assert [v.end for v in versions[1:]] == [r.end for r in rounds]
    assert [e for e in trace if e.kind == "uplink"] and [e for e in trace if e.kind == "receive"]
    ups = lambda t: [_event(e) for e in t if e.kind in ("compute", "uplink") or e.reason == "uplink-outage"]
    assert ups(trace) == ups(synchronous)


def test_fedbuff_on_a_moving_pf_uplink_carries_uploads_across_versions():
    """K = 2 of 8: uploads straddle aggregations; each is served on the step of the version it is
    in (the next version's links from the aggregation), every dispatch ends in one update, one
    drop with a reason or is in flight at the end, and the same seeds give the same trace."""
    def run():
        network, channel_rng = _umi({"uplink_access": "pf", "speed_kmh": 30.0})
        return run_buffered(NetworkOnly(8, 2e6), network, Buffered(2), 6, np.random.default_rng(5),
                            RunOptions(channel_rng=channel_rng))
    versions, trace = run()
    aggregations = [v.end for v in versions[1:]]
    ups = [e for e in trace if e.kind == "uplink"]
    assert len(versions) == 7 and any(e.start < t < e.end for e in ups for t in aggregations)
    assert all(e.reason for e in trace if e.kind == "dropped")
    assert run()[1] == trace
