"""Every setting a run takes, declared once: ``RunSpec``, the run as asked, whose fields carry
their type, range, default, one-line doc, command-line flag, label and section (``option``).

The command line's flags (``scenarios.cli.common.add_run_settings``), the sweep files' keys
(``SWEEP_KEYS``), the checks (``check_spec``), the run's label (``label_suffix``), ``fl-cosim list``
and the command reference of the docs are all read from the declarations; the training settings
are declared the same way in ``learning.training.LocalTraining`` (the ``training`` table's entries)
and an algorithm's options in its ``Options``. Adding a setting is one field here plus the code
that uses it. A bad value gets one line naming the key and the allowed range; non-finite numbers
are always refused, so no NaN or infinity reaches a result file. Also here: the bounds a machine
can hold.
"""

from __future__ import annotations

import dataclasses
from dataclasses import MISSING, dataclass
from typing import Literal

from contract.setting import (MAX_COUNT, MAX_DEVICES, MAX_ROUNDS, Setting, UsageError, among, bounds, needs_words,  # noqa: F401 (the settings' kinds)
                               non_negative, positive, positive_int, without_effect)
from learning.options import allowed_text, check_field, default_words, doc_of, field_setting, option
from netsim.transport.durations import EXACT_TIME, MAX_COMPUTE_TIME, MAX_DEADLINE, MAX_RHO, TIMING_MODES  # noqa: F401 (the clock's bounds)
from netsim.normalized.system import NetworkSystem
from scenarios.definitions.orchestrators import ORCHESTRATORS, read_by

MAX_SEED = 2**63 - 1  # numpy's SeedSequence takes any non-negative int; this keeps it a JSON/CSV int
MAX_SEEDS = 10_000  # seeds of one command (compare, sweep, reproduce): each is a whole run
MAX_ROUND_TIME_DEVICES = 1_000_000  # round-time: per-device plan entries and timeline arrays
MAX_ROUND_TIME_EVENTS = 100_000_000  # round-time: devices x rounds (about a minute at 5 ms per 10,000-device round)
MAX_CELL_DRAWS = 10_000_000  # cell: devices x fading rounds (two SNRs each, 160 MB)
JOBS = Setting(int, low=1, high=256)  # --jobs of the pooled commands: worker processes
TARGET = Setting(float, low=0, high=1, low_open=True, none=True)  # --target: a mean accuracy (None: the command's rule)
# The network's bounds are what the clock can hold (their derivation: netsim.transport.durations); the
# network settings below take them from the network systems' own declarations (``bounds``).


# --- the declarations ------------------------------------------------------------------
DEFAULT_SCENARIO = "digits-rotation"
DEFAULT_SYSTEM = "wireless-slow-ul"  # a preset of scenarios.definitions.systems (tests/test_declared_settings.py)
SECTIONS = {  # a field's ``section``: where it belongs, and so how it is checked
    "spec": "what runs: the scenario, the algorithm and its options",
    "run": "the run's knobs",
    "network": "the network system and its timing",
    "scenario": "the scenario's knobs (only where the scenario has them: Scenario.knobs)",
    "communication": "update codecs and the network's scheduler (scenarios.definitions.communication)",
    "training": "overrides of the scenario's training settings (learning.training.LocalTraining)",
    "clock": "the orchestrator (synchronous rounds, or buffered asynchronous aggregation: netsim.clock.buffered) and the run's budget",
}
# Which orchestrators read a setting: each orchestrator says the settings it reads
# (``scenarios.definitions.orchestrators.Orchestrator.reads``; a plugin's too), a field read by
# some declares ``requires={"orchestrator": read_by(its name)}``, and ``check_spec`` refuses it,
# set, under any orchestrator that does not read it.


def _orchestrators() -> tuple[str, ...]:
    return tuple(ORCHESTRATORS)


def _orchestrators_doc() -> str:
    """Who drives the learner: each registered orchestrator with its one-line doc."""
    return ("who drives the learner: " + "; ".join(f"{name}, {o.doc}" for name, o in ORCHESTRATORS.items())
            + "; the asynchronous ones drive fedavg and fedprox")


def _codec(downlink: bool):
    def check(key: str, spec: str):
        from learning.codecs import parse_codec

        return parse_codec(spec, downlink=downlink)  # the Codec: resolve keeps it and records its canonical spec
    return check


def _codec_doc(what: str):
    def doc() -> str:
        from learning.codecs import ALGORITHMS_TAKING_CODECS, codec_help

        return f"{what}: {codec_help()} ({', '.join(ALGORITHMS_TAKING_CODECS)})"
    return doc


def _policies() -> tuple[str, ...]:
    from netsim.scheduling import POLICIES

    return tuple(POLICIES)


def _policies_doc() -> str:
    """The registered policies, each with what it needs (``Policy.needs_channel``, ``needs_deadline``)."""
    from netsim.scheduling import POLICIES

    needs = [(" (a cell)", "needs_channel"), (" (with --deadline)", "needs_deadline")]
    listed = [name + "".join(text for text, flag in needs if getattr(cls, flag)) for name, cls in POLICIES.items()]
    return "who takes part each round (--participation of the devices): " + ", ".join(listed)


def _local_training() -> type:
    from learning.local_training import LocalTraining

    return LocalTraining


@dataclass(frozen=True)
class RunSpec:
    """One run as asked: which scenario, algorithm (and its options), network system (and its
    timing, deadline and optional ``rho``/``t_min``/``inv_mu`` in place of the preset's), rounds,
    seed, evaluation period and participation (None: the scenario's). Not checked on
    construction: ``scenarios.execution.spec.resolve`` checks it (``check_spec``).

    Each field is a declaration (``option``): its ``section``, ``flag`` (with ``command``, each
    command gives the flag its own form: ``--algorithm`` takes several names), ``sweep`` (False:
    a sweep file gives it otherwise: seeds, ``[[algorithm]]``), ``label`` (shown in the run's
    label when not the default: ``ul=qsgd:bits=4``), ``entries`` (a table whose entries are
    declared by a class: ``training``), ``cli_default`` (the command line's default where
    the API has none) and ``recorded`` (where ``config.json`` records its resolved value, a
    dotted path: a sweep's tables show it from there)."""

    scenario: str = option(MISSING, "scenario name (see 'fl-cosim list')", flag="--scenario", section="spec",
                           cli_default=DEFAULT_SCENARIO)
    algorithm: str = option(MISSING, "algorithm name (see 'fl-cosim list')", flag="--algorithm", section="spec", command=True,
                            sweep=False, default_text="each command's")
    system: str = option(DEFAULT_SYSTEM, "network system (see 'fl-cosim list')", flag="--system", section="network")
    rounds: int | None = option(None, "training rounds after the set-up round", low=1, high=MAX_ROUNDS, flag="--rounds",
                                section="run", default_text="the scenario's")
    seed: int = option(0, "run seed", low=0, high=MAX_SEED, flag="--seed", section="run", command=True, sweep=False)
    options: dict = option(dict, "algorithm option, repeatable (e.g. mu=0.5); goes to every algorithm of the run that takes it",
                           flag="--option", metavar="KEY=VALUE", section="spec", sweep=False, default_text="the scenario's")
    mode: Literal[TIMING_MODES] = option("pipelined", "timing mode", flag="--mode", label="mode", section="network", recorded="system.mode",
                                         requires={"orchestrator": read_by("mode")})
    deadline: float | None = option(None, "round deadline (T_dl units; seconds on a physical cell); late devices are dropped "
                                    "from aggregation", **bounds(NetworkSystem, "deadline"), flag="--deadline", label="deadline", section="network",
                                    recorded="system.deadline", requires={"orchestrator": read_by("deadline")})
    duplex: Literal[("full", "half")] = option("full", "a normalized system's medium: full (downlink and uplink each their own) "
                                               "or half (one transfer at a time either way: synchronous rounds then take --mode "
                                               "barrier); a cell's is --radio duplex=tdd|fdd", flag="--duplex", label="duplex",
                                               section="network", recorded="system.duplex")
    evaluate_every: int = option(1, "evaluate every N rounds", low=1, high=MAX_ROUNDS, flag="--eval-every", section="run", recorded="evaluate_every")
    participation: float | None = option(None, "fraction of devices sampled per round", low=0, high=1, low_open=True,
                                         flag="--participation", section="run", default_text="the scenario's", recorded="participation",
                                         requires={"orchestrator": read_by("participation")})
    unreached: Literal[("held", "excluded")] = option("held", "how a device is scored while the models sent to it do not reach "
                                                      "it (absent: offline, flat, out of coverage; or a downlink outage): on the model "
                                                      "it holds (held: the last it received, else the initial one) or left out of "
                                                      "the scores (excluded); a cell with outages or dynamics",
                                                      flag="--unreached", label="unreached", section="run", recorded="unreached")
    rho: float | None = option(None, "T_ul / T_dl in place of the system's", **bounds(NetworkSystem, "rho"), flag="--rho",
                               section="network", default_text="the system's", recorded="system.rho")
    t_min: float | None = option(None, "minimum compute time in T_dl, in place of the system's", **bounds(NetworkSystem, "t_min"),
                                 flag="--t-min", section="network", default_text="the system's", recorded="system.t_min")
    inv_mu: float | None = option(None, "mean extra compute delay 1/mu in T_dl, in place of the system's",
                                  **bounds(NetworkSystem, "inv_mu"), flag="--inv-mu", section="network", default_text="the system's", recorded="system.inv_mu")
    training: dict = option(dict, SECTIONS["training"], section="training", entries=_local_training, default_text="the scenario's")
    devices: int | None = option(None, "number of devices, where the scenario allows it", low=1, high=MAX_DEVICES, flag="--devices",
                                 section="scenario", default_text="the scenario's", recorded="num_devices")
    alpha: float | None = option(None, "Dirichlet label-shift alpha, where the scenario allows it", low=0, low_open=True,
                                 flag="--alpha", section="scenario", default_text="the scenario's", recorded="scenario.settings.alpha")
    radio: dict = option(dict, "override a physical cell preset's parameter, repeatable (e.g. uplink_access=fdma; see "
                         "'fl-cosim cell')", flag="--radio", metavar="KEY=VALUE", section="network", default_text="the preset's")
    uplink_codec: str = option("none", _codec_doc("codec of the uploaded model differences"), flag="--uplink-codec",
                               metavar="CODEC", label="ul", check=_codec(downlink=False), section="communication", recorded="communication.uplink_codec")
    downlink_codec: str = option("none", "codec of the downlink models (their difference from the last received): as "
                                 "--uplink-codec, with ef=0 the default (error feedback is the uplink's)", flag="--downlink-codec",
                                 metavar="CODEC", label="dl", check=_codec(downlink=True), section="communication", recorded="communication.downlink_codec")
    scheduler: str = option("random", _policies_doc, words=_policies,
                            flag="--scheduler", metavar="POLICY", label="sched", section="communication", recorded="communication.scheduler",
                            requires={"orchestrator": read_by("scheduler")})
    orchestrator: str = option("sync", _orchestrators_doc, words=_orchestrators, flag="--orchestrator", metavar="ORCHESTRATOR",
                               label="orch", section="clock", recorded="clock.orchestrator")
    buffer_k: int | None = option(None, "fedbuff: aggregate every K arrivals", low=1, high=MAX_DEVICES, flag="--buffer-k", label="K",
                                  section="clock", default_text="half the concurrency", recorded="clock.buffer_k",
                                  requires={"orchestrator": read_by("buffer_k")})
    concurrency: int | None = option(None, "fedbuff, fedasync: devices training at once", low=1, high=MAX_DEVICES, flag="--concurrency",
                                     label="C", section="clock", default_text="every device", recorded="clock.concurrency",
                                     requires={"orchestrator": read_by("concurrency")})
    idle_choice: Literal[("random", "fifo")] = option("random", "fedbuff, fedasync: which idle devices get the next version when "
                                                    "more are idle than --concurrency leaves places for: uniformly at random "
                                                    "(FedBuff's, FLSim's), or in the order they became idle (fifo)",
                                                    flag="--idle-choice", label="idle", section="clock", recorded="clock.idle_choice",
                                                    requires={"orchestrator": read_by("idle_choice")})
    max_staleness: int | None = option(None, "fedbuff, fedasync: drop an update more than N versions old (reason stale, as "
                                       "FLSim's max_staleness)", low=0, high=MAX_ROUNDS, flag="--max-staleness", label="smax",
                                       section="clock", default_text="none: every update is aggregated", recorded="clock.max_staleness",
                                       requires={"orchestrator": read_by("max_staleness")})
    tiers: int = option(2, "fedat: the latency tiers M (devices sorted by expected latency, split into M tiers of near-equal size)",
                        low=1, high=MAX_DEVICES, flag="--tiers", label="M", section="clock", recorded="clock.tiers",
                        requires={"orchestrator": read_by("tiers")})
    server_lr: float = option(1.0, "fedbuff: the server learning rate eta_g", low=0, low_open=True, high=100, flag="--server-lr",
                              label="eta_g", section="clock", recorded="clock.server_lr", requires={"orchestrator": read_by("server_lr")})
    staleness_exponent: float = option(0.5, "fedbuff, fedasync: staleness weight (1 + tau)^-a of an update tau versions old "
                                       "(0: none; 0.5: FedBuff's 1/sqrt(1 + tau))", low=0, high=10, flag="--staleness-exponent",
                                       label="a", section="clock", recorded="clock.staleness_exponent", requires={"orchestrator": read_by("staleness_exponent")})
    mixing_alpha: float = option(0.6, "fedasync: mixing weight alpha, x <- (1 - alpha s) x + alpha s y", low=0, high=1, low_open=True,
                                 flag="--mixing-alpha", label="alpha", section="clock", recorded="clock.mixing_alpha",
                                 requires={"orchestrator": read_by("mixing_alpha")})
    until: dict = option(dict, "stop at a budget, repeatable: time (the clock's unit), downlink_bits, uplink_bits or energy_j "
                         "(all devices, J; a cell), e.g. time=20", flag="--until", metavar="KEY=VALUE", section="clock",
                         default_text="none: all rounds")




def declared(section: str | None = None) -> list[dataclasses.Field]:
    """The declared fields of ``RunSpec`` (of one ``section``), in order."""
    return [f for f in dataclasses.fields(RunSpec) if section in (None, f.metadata["section"])]


def settings_of(section: str) -> dict[str, Setting]:
    return {f.name: field_setting(RunSpec, f) for f in declared(section)}


SWEEP_KEYS = tuple(f.name for f in declared() if f.metadata.get("sweep", True))  # what a sweep file's [settings] may set
RUN_SETTINGS = settings_of("run")
NETWORK_SETTINGS = settings_of("network")
SCENARIO_KNOBS = settings_of("scenario")  # what a scenario may let a run change (Scenario.knobs)
COMMUNICATION_DEFAULTS = {f.name: f.default for f in declared("communication")}


def recorded_value(config: dict, f: dataclasses.Field):
    """The resolved value of the declared field ``f`` that a run's ``config.json`` records at its
    ``recorded`` path (absent: the field's default, as a setting left at its default is not recorded)."""
    value = config
    for key in f.metadata["recorded"].split("."):
        if not isinstance(value, dict) or key not in value:
            return None if f.default is MISSING else f.default
        value = value[key]
    return value


def reference() -> list[dict]:
    """Every declared setting as ``fl-cosim list`` and the docs' command reference show it: its
    ``RunSpec`` field (a training entry as ``training.KEY``), section, command-line flag, sweep
    key, default, allowed values and doc."""
    rows = []
    for f in declared():
        entries = f.metadata.get("entries")
        items = [(entries(), e, f"{f.name}.{e.name}") for e in dataclasses.fields(entries())] if entries else [(RunSpec, f, f.name)]
        for cls, g, name in items:
            rows.append({"setting": name, "section": f.metadata["section"], "flag": g.metadata.get("flag"),
                         "sweep": name if f.metadata.get("sweep", True) else None,
                         "default": default_words(g, f.metadata.get("cli_default") or (f.metadata.get("default_text") if entries else None)),
                         "allowed": allowed_text(field_setting(cls, g), g.metadata.get("requires", {})), "doc": doc_of(g)})
    return rows


def check_spec(spec: RunSpec, knobs) -> dict:
    """Every declared field of ``spec`` checked and converted (UsageError naming it, ``evaluate-every
    must be ...``); a scenario knob only where the scenario has it (``knobs``); a table declared by
    its entries (``training``) entry by entry. Returns the checked values (a codec as its parsed
    ``learning.codecs.Codec``: ``codec.spec`` is its canonical text)."""
    values = {}
    for f in declared():
        values[f.name] = check_field(RunSpec, f, f.name.replace("_", "-"), getattr(spec, f.name))
        if f.metadata["section"] == "scenario" and values[f.name] is not None and f.name not in knobs:
            raise UsageError(f"scenario {spec.scenario!r} has no {f.name} setting (its settings: {', '.join(knobs) or 'none'})")
        if f.metadata.get("entries"):
            values[f.name] = check_entries(f.metadata["entries"](), values[f.name], f.name)
    check_effect(values)
    return values


def check_effect(values: dict) -> None:
    """UsageError naming the first setting of a run (its checked ``values``) that is set, not left at
    its default, and has no effect under the others: each field's ``requires`` (an orchestrator's
    options under another orchestrator: ``--mixing-alpha`` under fedbuff). The one check of what a
    setting applies to (``contract.setting.without_effect``)."""
    fields = declared()
    requires = {f.name: f.metadata["requires"] for f in fields}
    found = without_effect(requires, values, [f.name for f in fields if values.get(f.name, f.default) != f.default])
    if found is not None:
        key, other, wanted = found
        flag = {f.name: f.metadata.get("flag") or f.name for f in fields}
        raise UsageError(f"{flag[key]} has an effect only with {needs_words(flag[other], wanted)} "
                         f"(this run has {flag[other]} {values[other]})")


def check_entries(cls: type, table: dict, name: str) -> dict:
    """A table's entries (``training``), each typed and range-checked by its declaration, a field of
    ``cls`` (an unknown key refused, naming the known ones)."""
    entries = {f.name: f for f in dataclasses.fields(cls)}
    for key in table:
        if key not in entries:
            raise UsageError(f"unknown {name} setting {key!r}; known: {', '.join(entries)}")
    return {key: check_field(cls, entries[key], f"{name} {key}", value) for key, value in table.items()}


def label_suffix(spec) -> str:
    """What the run's label shows of its settings: each labelled one that is not its default (`` ul=qsgd:bits=4``)."""
    return "".join(f" {f.metadata['label']}={getattr(spec, f.name)}" for f in declared()
                   if f.metadata.get("label") and getattr(spec, f.name) != f.default)
