"""The two system kinds answer one interface (``netsim.kind.SystemKind``): a run asks the system
its time unit, whether it records energy, its config record, its overrides and its network,
instead of testing its type; the engine, the scheduler and the recorder ask the bound network
(``netsim.kind.Network``) its round process, outages and channel reports. Records are checked
key by key (folder names hash them), and a written record's kind reads back as the system's answers."""

import dataclasses
import pickle
from dataclasses import asdict, dataclass

import numpy as np
import pytest

from netsim import NetworkSystem, simulate_rounds
from netsim.radio.cell import Cell
from netsim.kind import Normalized, SystemKind, adopted
from netsim.radio.physical import LinkBudget, PhysicalSystem, channel_seeds


def cell_system(**changes) -> PhysicalSystem:
    return PhysicalSystem(Cell(distances_m=(40.0, 60.0, 80.0)), LinkBudget(1e6, 1.0, 5.0), LinkBudget(1e6, 0.2, 7.0),
                          cycles_per_sample=1e4, **changes)


def test_normalized_system_answers_as_the_paper_s_time_unit():
    system = NetworkSystem(rho=4.0, t_min=1.0, inv_mu=1.0, deadline=9.0)
    assert isinstance(system, SystemKind)
    assert (system.time_unit, system.records_energy, system.multicast_airtime_s_per_bit) == ("T_dl", False, None)
    record = system.record("wireless-slow-ul")
    assert list(record) == ["name", "rho", "t_min", "inv_mu", "t_dl", "mode", "deadline"]
    assert record == {"name": "wireless-slow-ul", "rho": 4.0, "t_min": 1.0, "inv_mu": 1.0, "t_dl": 1.0,
                      "mode": "pipelined", "deadline": 9.0}


def test_normalized_overrides_replace_only_what_is_given_and_keep_the_checks():
    system = NetworkSystem(rho=4.0, t_min=1.0, inv_mu=1.0)
    assert system.with_overrides() is system
    assert system.with_overrides(rho=2.0, inv_mu=0.0) == NetworkSystem(rho=2.0, t_min=1.0, inv_mu=0.0)
    assert system.with_overrides(t_min=0.0).t_min == 0.0  # 0 is a value, not "not given"
    with pytest.raises(ValueError, match=r"rho must be a finite number in \(0, 100000\], got -1.0"):
        system.with_overrides(rho=-1.0)


def test_normalized_system_is_its_own_network_and_draws_no_channel():
    system = NetworkSystem(rho=1.0, t_min=1.0, inv_mu=0.0)
    assert system.bind(np.ones(5), np.random.SeedSequence(3)) == (system, None)


def test_physical_system_answers_in_seconds_with_energy_and_records_kind_first():
    system = cell_system(deadline=2.5)
    assert (system.time_unit, system.records_energy) == ("s", True)
    record = system.record("umi-tdma")
    assert list(record)[:4] == ["name", "kind", "time_unit", "cell"]
    every = asdict(system)
    for holder, declared in ((every["cell"], system.cell), (every, system)):  # declared omit_default: recorded only when set
        for f in dataclasses.fields(declared):
            if f.metadata.get("omit_default"):
                del holder[f.name]
    assert record == {"name": "umi-tdma", "kind": "physical", "time_unit": "s", **every}
    assert dataclasses.replace(system, cell=dataclasses.replace(system.cell, k_factor_db=12.0)).record("x")["cell"]["k_factor_db"] == 12.0
    assert record["cell"]["distances_m"] == (40.0, 60.0, 80.0) and record["deadline"] == 2.5


def test_physical_system_refuses_the_normalized_overrides():
    system = cell_system()
    assert system.with_overrides() is system
    for given in ({"rho": 2.0}, {"t_min": 0.0}, {"inv_mu": 1.0}):
        with pytest.raises(ValueError, match="apply to the normalized systems, not to a physical cell"):
            system.with_overrides(**given)


def test_physical_bind_places_and_fades_from_the_network_seed_s_channel_child():
    system = cell_system()
    samples = np.array([10.0, 20.0, 30.0])
    network, channel_rng = system.bind(samples, np.random.SeedSequence(7))
    layout_seq, fading_seq, planning_seq = channel_seeds(np.random.SeedSequence(7))
    expected = system.cell.place(3, np.random.default_rng(layout_seq))
    np.testing.assert_array_equal(network.layout.x_m, expected.x_m)
    np.testing.assert_array_equal(network.layout.path_loss_db, expected.path_loss_db)
    np.testing.assert_array_equal(network.samples_per_update, samples)
    assert channel_rng.random() == np.random.default_rng(fading_seq).random()
    planned = system.network(expected, samples, np.random.default_rng(planning_seq))
    np.testing.assert_array_equal(network.planning_efficiency, planned.planning_efficiency)
    assert network.multicast_airtime_s_per_bit((0, 2)) == planned.multicast_airtime_s_per_bit((0, 2))
    assert (network.time_unit, network.records_energy, network.reports_channel, network.has_outages) == ("s", True, True, False)
    assert cell_system(min_bps_per_hz=0.5).bind(samples, np.random.SeedSequence(7))[0].has_outages


def test_each_network_gives_its_own_round_process_and_channel_report():
    from netsim.transport.physical_round import physical_round_process
    from netsim.transport.physical_timeline import physical_round_fast
    from netsim.transport.reference import round_process_reference
    from netsim.transport.timeline import round_process

    system = NetworkSystem(rho=1.0, t_min=1.0, inv_mu=0.0)
    assert (system.round_process("timeline"), system.round_process("processes")) == (round_process, round_process_reference)
    assert (system.has_outages, system.reports_channel, system.channel_report(np.random.default_rng(0)).uplink_bps) == (False, False, None)
    network, channel_rng = cell_system().bind(np.ones(3), np.random.SeedSequence(7))
    fast, processes = network.round_process("timeline", channel_rng), network.round_process("processes", channel_rng)
    assert (fast.func, processes.func) == (physical_round_fast, physical_round_process)
    assert fast.keywords == processes.keywords == {"channel_rng": channel_rng}
    report = network.channel_report(channel_rng)  # the round's own draw, from a copy: the generator is left as it was
    channel = network.draw_round(channel_rng)
    np.testing.assert_array_equal(report.uplink_bps, channel.uplink_bps)
    np.testing.assert_array_equal(report.downlink_bps, channel.downlink_bps)


def test_a_cell_refuses_a_local_update_longer_than_a_round_may_add():
    system = cell_system()  # 1e4 cycles per sample at 1 GHz: 1e-5 s a sample
    system.check_compute(np.array([10.0, 1e5]), 1.0)
    with pytest.raises(ValueError, match="makes a local update of 200000 samples last 2 s, above the 1 s"):
        system.check_compute(np.array([10.0, 2e5]), 1.0)
    NetworkSystem(rho=1.0, t_min=1.0, inv_mu=0.0).check_compute(np.array([1e12]), 1.0)  # t_min does not grow with the data


def test_a_written_record_reads_back_as_its_system_s_answers():
    from scenarios.records.result_folder import RECORDED_KINDS

    for system in (NetworkSystem(rho=4.0, t_min=1.0, inv_mu=1.0), cell_system(), adopted(Duck())):
        record = system.record("x")
        kind = RECORDED_KINDS[record.get("kind")]
        assert (kind.time_unit, kind.records_energy) == (system.time_unit, system.records_energy)
        assert kind.unit_field is None or record[kind.unit_field] == system.t_dl


def test_physical_bind_reports_a_layout_the_cell_cannot_hold():
    with pytest.raises(ValueError, match="3 distances given for 4 devices"):
        cell_system().bind(np.ones(4), np.random.SeedSequence(0))


@dataclass(frozen=True)
class Duck:
    """A plugin's normalized system that does not subclass ``SystemKind``."""

    mode: str = "pipelined"
    deadline: float | None = None
    t_dl: float = 2.0
    rho: float = 3.0
    t_min: float = 1.0
    inv_mu: float = 0.0

    def round_durations(self, plan, model_bits, rng):
        return NetworkSystem(self.rho, self.t_min, self.inv_mu, self.t_dl).round_durations(plan, model_bits, rng)


@dataclass(frozen=True)
class NoRho:
    mode: str = "pipelined"
    deadline: float | None = None
    t_dl: float = 1.0


def test_a_duck_typed_plugin_system_is_adopted_as_a_normalized_one():
    system = adopted(Duck())
    assert isinstance(system, Normalized) and adopted(system) is system
    assert adopted(NetworkSystem(1.0, 1.0, 0.0)) == NetworkSystem(1.0, 1.0, 0.0)  # already has the interface
    assert (system.time_unit, system.records_energy, system.multicast_airtime_s_per_bit) == ("T_dl", False, None)
    assert system.record("duck") == {"name": "duck", "mode": "pipelined", "deadline": None, "t_dl": 2.0, "rho": 3.0,
                                     "t_min": 1.0, "inv_mu": 0.0}
    assert (system.t_dl, system.rho, system.mode) == (2.0, 3.0, "pipelined")
    assert system.with_overrides() is system and system.with_overrides(rho=5.0).system == Duck(rho=5.0)
    with pytest.raises(TypeError):
        adopted(NoRho()).with_overrides(rho=2.0)
    assert system.bind(np.ones(2), np.random.SeedSequence(0)) == (system, None)
    assert pickle.loads(pickle.dumps(system)) == system


def test_an_adopted_system_times_rounds_as_itself():
    from contract import RoundPlan, Stream

    plans = [RoundPlan((Stream((0, 1), 8.0),), {0: 8.0, 1: 8.0}, (0, 1))]
    alone, _ = simulate_rounds(plans, Duck(), 8.0, np.random.default_rng(0))
    adopted_, _ = simulate_rounds(plans, adopted(Duck()), 8.0, np.random.default_rng(0))
    assert [r.end for r in adopted_] == [r.end for r in alone] == [2.0 + 1.0 + 12.0]


def test_run_prints_the_clock_in_t_dl_on_a_system_whose_t_dl_is_not_one(tmp_path, capsys, plugin_registries):
    """A plugin system with T_dl = 2 (fedavg on 4 devices, rho = 1, no compute time, barrier):
    each training round is 1 broadcast + 4 uploads = 5 T_dl = 10 on the clock (FedAvg's set-up round
    sends nothing). The table shows 2 rounds in T_dl (10), the JSON keeps the clock (20); a cell's
    clock is in its unit."""
    import json

    from netsim.radio.physical import PhysicalSystem
    from scenarios.cli.main import main

    plugin = tmp_path / "double_t_dl.py"
    plugin.write_text("from netsim.normalized.system import NetworkSystem\nfrom scenarios.definitions.systems import SystemFactory\n\n"
                      "SYSTEMS = [SystemFactory('double-t-dl', 'T_dl = 2', lambda mode, deadline: NetworkSystem(rho=1.0, "
                      "t_min=0.0, inv_mu=0.0, t_dl=2.0, mode=mode, deadline=deadline))]\n")
    argv = ["run", "--plugin", str(plugin), "--system", "double-t-dl", "--algorithm", "fedavg", "--devices", "4", "--rounds", "2",
            "--mode", "barrier", "--backend", "loop", "--quiet", "--no-figure", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    row = capsys.readouterr().out.splitlines()[2].split()
    assert row[:2] == ["fedavg", "mode=barrier"] and row[5] == "10.0"  # the label names the timing
    assert main(argv + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["simulated_time"] == 20.0
    assert NetworkSystem(rho=1.0, t_min=0.0, inv_mu=0.0, t_dl=2.0).time_scale == 2.0 and PhysicalSystem.time_scale == 1.0
