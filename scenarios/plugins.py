"""Plugins: algorithms, scenarios, models, network systems, scheduling policies, codecs and
orchestrators that live outside the package.

A plugin is a Python module that declares what it adds in module-level names (any of them):

    ALGORITHMS = [MyLearner]             # FederatedLearner subclasses, each with ``name`` and ``Options``
    SCENARIOS = [Scenario(...)]          # scenarios.definitions.scenario.Scenario, with its data builder
    MODELS = {"my-model": build}         # torch.nn.Module builders a scenario names
    SYSTEMS = [SystemFactory(...)]       # network systems with ``round_durations``
    SCHEDULERS = [MyPolicy]              # netsim.scheduling.Policy subclasses, each with ``name``
    CODECS = [MyCodec]                   # learning.codecs.Codec subclasses (frozen dataclasses), each with ``name``
    ORCHESTRATORS = [MyOrchestrator()]   # scenarios.definitions.orchestrators.Orchestrator objects, each with
                                         # ``name``, the existing settings it ``reads`` and ``run``

It is named by ``--plugin PATH_OR_MODULE`` (a ``.py`` file, a folder whose every ``.py`` file
is one such module, or an importable module name), by ``plugins = [...]`` in a sweep file, or
by an installed package's entry point in the group ``fl_cosim.plugins`` (the entry point's
value names the module). Its things join the built-in registries, are checked as they are,
and each run records their module, version and source checksum in ``config.json``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import io
import os
import re
import stat
import sys
from contextlib import contextmanager, redirect_stdout
from dataclasses import is_dataclass
from pathlib import Path
from types import ModuleType
from typing import Iterable

from learning import worker_start as start
from scenarios.errors import UsageError
from scenarios.plugin_source import SourceLoader, from_source

ENTRY_POINT_GROUP = "fl_cosim.plugins"
KINDS = ("algorithm", "scenario", "model", "system", "scheduler", "codec", "orchestrator")
NAME = re.compile(r"[a-z0-9][a-z0-9._+-]{0,63}")  # as the built-in names: a run's folder name starts with them

ORIGINS: dict[tuple[str, str], dict] = {}  # (kind, name) -> {"module", "version", "sha256"} of the plugin that added it
LOADED: dict[str, ModuleType] = {}  # source as loaded (absolute path or module name) -> module
FILES: dict[str, list[Path]] = {}  # source -> its file and the files of the modules it imported (the code digest)
_installed_loaded = False


def origin(kind: str, name: str) -> dict | None:
    """Where a registered thing came from (None: built in)."""
    return ORIGINS.get((kind, name))


def sources() -> list[str]:
    """The ``--plugin`` sources loaded in this process (absolute paths or module names), for
    worker processes that start afresh (Ray) to load the same."""
    return list(LOADED)


def _worker_setup():
    """What a new worker process runs first: load the plugins loaded here."""
    return functools.partial(load_plugins, sources()) if LOADED else None


start.add_setup("plugins", _worker_setup)


def plugin_files() -> list[Path]:
    """Every loaded plugin's source file and the files of the modules it imported that are
    neither Python's nor an installed library's (its helpers), sorted: what the code digest
    (``scenarios.records.provenance.code_digest``) covers beyond the package."""
    return sorted({path for files in FILES.values() for path in files})


def executed_files() -> list[Path]:
    """``plugin_files`` and the files of every module imported by now (a method may import a
    helper long after its plugin loaded) that lies beside a loaded plugin, in its folder or
    below, and is neither Python's, a library's nor fl-cosim's: what a run executed of its
    plugins, recorded after it (``scenarios.execution.runner``). Modules that only a training
    worker process imported are not seen here."""
    loaded = plugin_files()
    folders = {path.parent for path in loaded}
    if not folders:  # no plugin: nothing lies beside one (and no module's path is resolved, a run's fixed cost)
        return loaded
    beside, others = [_prefix(f) for f in folders], [_prefix(f) for f in _others_folders()]
    found = set(loaded)
    resolve = _module_paths()
    for module in list(sys.modules.values()):
        path = resolve(module)
        if path is not None and any(path.startswith(f) for f in beside) and not any(path.startswith(f) for f in others):
            found.add(Path(path))
    return sorted(found)


def _prefix(folder: Path) -> str:
    """What the text of a normalized absolute path under ``folder`` starts with (``Path.is_relative_to``
    of a file, as text: thousands of modules, no ``Path`` made for each)."""
    return os.path.join(str(folder), "")


def _module_paths():
    """``module_path`` as text, for the modules of one call (``executed_files``): each folder
    resolved once (thousands of modules lie in a few hundred folders), then only a file's own
    name if it is a symbolic link; the same path as ``Path(file).resolve()``."""
    folders: dict[str, str] = {}

    def resolve(module) -> str | None:
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file.endswith(".py") or not os.path.isabs(file):
            return None
        folder, name = os.path.split(file)
        real = folders.get(folder)
        if real is None:
            real = folders[folder] = os.path.realpath(folder)
        path = os.path.join(real, name)
        try:
            mode = os.lstat(path).st_mode
        except (OSError, ValueError):
            return None
        if stat.S_ISLNK(mode):
            path = os.path.realpath(path)
            return path if os.path.isfile(path) else None
        return path if stat.S_ISREG(mode) else None

    return resolve


def module_path(module) -> Path | None:
    """``module``'s source file as it lies on disk: its ``__file__`` resolved, when that is an
    absolute path to a regular ``.py`` file; None otherwise. A relative ``__file__`` names no
    file: ``torch.classes`` and ``torch.ops`` carry the bare ``_classes.py`` and ``_ops.py``,
    which, resolved against the working folder, would take a plugin folder's own files of
    those names (or none) for torch's code."""
    path = _module_paths()(module)
    return None if path is None else Path(path)


def blame(error: BaseException) -> str | None:
    """The plugin file whose code raised ``error`` (its innermost frame of a plugin's, with
    the line): ``plugin helper.py (line 12)``; None when no plugin's code is in its traceback,
    nor in those of its causes (SimPy raises a copy whose cause is the original)."""
    files = {str(path) for path in executed_files()}
    found = None
    while error is not None and found is None:
        frame = error.__traceback__
        while frame is not None:
            file = str(Path(frame.tb_frame.f_code.co_filename).resolve())
            if file in files:
                found = f"plugin {Path(file).name} (line {frame.tb_lineno})"
            frame = frame.tb_next
        error = error.__cause__
    return found


def _others_folders() -> tuple[Path, ...]:
    """Where the code of others lies: Python's and the installed libraries' folders, and
    fl-cosim's own packages (in the package digest already)."""
    import sysconfig

    from scenarios.records.provenance import package_folders

    paths = sysconfig.get_paths()
    return package_folders() + tuple(Path(paths[key]).resolve() for key in ("stdlib", "platstdlib", "purelib", "platlib")
                                     if key in paths)


def _own_files(module: ModuleType, before: set[str]) -> list[Path]:
    """``module``'s file and those of the modules first imported while it loaded that belong to
    it (its package) or lie in its folder or below and belong to no library nor fl-cosim (helpers
    beside it): files that exist (``module_path``), never a library's module first imported here."""
    libraries = _others_folders()
    top = module.__name__.split(".")[0]
    own = module_path(module)
    files = [] if own is None else [own]
    for name in sorted(set(sys.modules) - before - {module.__name__}):
        path = module_path(sys.modules.get(name))
        if path is None:
            continue
        beside = own is not None and path.is_relative_to(own.parent) and not any(path.is_relative_to(f) for f in libraries)
        if name.split(".")[0] == top or beside:
            files.append(path)
    return files


def load_plugins(sources: Iterable[str], relative_to: Path | None = None) -> list[ModuleType]:
    """Load each source (a ``.py`` file, a folder of them, or a module name; paths relative to
    ``relative_to`` or the working folder) once, registering what it declares."""
    sources = list(sources)
    if sources:
        from_source(_others_folders())  # what the code digest records is what runs (scenarios/plugin_source.py)
    modules = []
    for source in sources:
        if not isinstance(source, str) or not source:
            raise UsageError(f"a plugin is a path or a module name, got {source!r}")
        path = Path(source) if relative_to is None else Path(relative_to) / source
        if source.endswith(".py") or "/" in source or path.is_dir():
            modules += _load_path(path.resolve())
        else:
            modules.append(_load_module_name(source))
    return modules


def load_installed() -> None:
    """Load every installed package's plugin (entry point group ``fl_cosim.plugins``), once."""
    global _installed_loaded
    if _installed_loaded:
        return
    _installed_loaded = True
    entries = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    if entries:
        from_source(_others_folders())
    for entry in entries:
        if entry.value in LOADED:
            continue
        before = set(sys.modules)
        try:
            with _quiet(entry.value):
                module = entry.load()
        except Exception as error:  # a broken plugin is one line, naming it
            raise UsageError(f"plugin {entry.name} ({entry.value}) does not load: {type(error).__name__}: {error}") from None
        if not isinstance(module, ModuleType):
            raise UsageError(f"plugin entry point {entry.name} must name a module, got {entry.value!r}")
        version = entry.dist.version if entry.dist is not None else None
        _register(entry.value, module, getattr(module, "__version__", None) or version, _own_files(module, before))


@contextmanager
def _quiet(source: str):
    """Load a plugin with its stdout captured (what it prints never mixes into a command's output,
    ``--json`` included; what it writes to file descriptor 1 goes to stderr) and its
    ``sys.exit`` refused in one line."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)  # what it writes to file descriptor 1 itself (os.write, a C library) goes to stderr
        with redirect_stdout(io.StringIO()):
            yield
    except SystemExit as stop:
        raise UsageError(f"plugin {source!r} called sys.exit({stop.code!r}) while loading") from None
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _load_path(path: Path) -> list[ModuleType]:
    if path.is_dir():
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
        if not files:
            raise UsageError(f"plugin folder {str(path)!r} has no .py file")
        return [module for file in files for module in _load_path(file)]
    if not path.is_file() or path.suffix != ".py":
        raise UsageError(f"plugin {str(path)!r} is not a .py file, a folder of them or a module name")
    key = str(path)
    if key in LOADED:
        return [LOADED[key]]
    name = path.stem
    if not name.isidentifier():
        raise UsageError(f"plugin file {path.name!r}: its name must be a Python identifier")
    present = sys.modules.get(name)
    if present is not None:
        raise UsageError(f"plugin file {str(path)!r}: a module named {name!r} is already loaded "
                         f"({getattr(present, '__file__', None) or 'built in'}); rename the file")
    spec = importlib.util.spec_from_file_location(name, path, loader=SourceLoader(name, str(path)))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its classes pickle by name (workers load the plugin first)
    before = set(sys.modules)
    try:
        with _quiet(key):
            spec.loader.exec_module(module)
        _register(key, module, getattr(module, "__version__", None), _own_files(module, before))
    except UsageError:
        del sys.modules[name]
        raise
    except Exception as error:
        del sys.modules[name]
        raise UsageError(f"plugin {str(path)!r} does not load: {type(error).__name__}: {error}") from None
    return [module]


def _load_module_name(name: str) -> ModuleType:
    if name in LOADED:
        return LOADED[name]
    before = set(sys.modules)
    try:
        with _quiet(name):
            module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name and name.startswith(error.name):
            raise UsageError(f"plugin {name!r} is neither a file, a folder nor an importable module") from None
        raise UsageError(f"plugin {name!r} does not load: ModuleNotFoundError: {error}") from None
    except Exception as error:
        raise UsageError(f"plugin {name!r} does not load: {type(error).__name__}: {error}") from None
    _register(name, module, getattr(module, "__version__", None) or _distribution_version(name), _own_files(module, before))
    return module


def _distribution_version(module_name: str) -> str | None:
    top = module_name.split(".")[0]
    for distribution in importlib.metadata.packages_distributions().get(top, []):
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _register(source: str, module: ModuleType, version: str | None, files: list[Path] = ()) -> None:
    """Check what ``module`` declares and add it to the registries (all or nothing)."""
    from learning.algorithms import ALGORITHMS
    from learning.algorithms.base import FederatedLearner
    from learning.codecs import CODECS, Codec
    from learning.models import MODELS
    from learning.options import Options
    from netsim.scheduling import POLICIES, Policy
    from scenarios.definitions.orchestrators import ORCHESTRATORS, Orchestrator
    from scenarios.definitions.registry import SCENARIOS
    from scenarios.definitions.scenario import Scenario
    from scenarios.definitions.systems import SYSTEMS, SystemFactory, system_names

    where = f"plugin {module.__name__}"
    record = {"module": module.__name__, "version": None if version is None else str(version), "sha256": _source_sha256(module)}
    declared = {kind: getattr(module, attribute, None) for kind, attribute in
                (("algorithm", "ALGORITHMS"), ("scenario", "SCENARIOS"), ("model", "MODELS"), ("system", "SYSTEMS"),
                 ("scheduler", "SCHEDULERS"), ("codec", "CODECS"), ("orchestrator", "ORCHESTRATORS"))}
    if all(value is None for value in declared.values()):
        raise UsageError(f"{where} declares nothing: give it ALGORITHMS, SCENARIOS, MODELS, SYSTEMS, SCHEDULERS, CODECS "
                         "or ORCHESTRATORS")
    additions = []
    for cls in _listed(declared["algorithm"], where, "ALGORITHMS"):
        if not (isinstance(cls, type) and issubclass(cls, FederatedLearner)) or not isinstance(cls.__dict__.get("name"), str):
            raise UsageError(f"{where}: ALGORITHMS holds {cls!r}, not a FederatedLearner subclass with its own name")
        if not (isinstance(cls.Options, type) and issubclass(cls.Options, Options) and is_dataclass(cls.Options)):
            raise UsageError(f"{where}: {cls.name}.Options must be a dataclass deriving learning.options.Options")
        try:
            cls.Options.settings()
            cls.Options()
        except (TypeError, ValueError) as error:
            raise UsageError(f"{where}: {cls.name}.Options: {error}") from None
        additions.append(("algorithm", cls.name, ALGORITHMS, cls))
    for scenario in _listed(declared["scenario"], where, "SCENARIOS"):
        if not isinstance(scenario, Scenario):
            raise UsageError(f"{where}: SCENARIOS holds {scenario!r}, not a scenarios.definitions.scenario.Scenario")
        additions.append(("scenario", scenario.name, SCENARIOS, scenario))
    models = declared["model"] or {}
    if not isinstance(models, dict) or not all(isinstance(k, str) and callable(v) for k, v in models.items()):
        raise UsageError(f"{where}: MODELS must map names to model builders")
    additions += [("model", name, MODELS, build) for name, build in models.items()]
    for factory in _listed(declared["system"], where, "SYSTEMS"):
        if not isinstance(factory, SystemFactory):
            raise UsageError(f"{where}: SYSTEMS holds {factory!r}, not a scenarios.definitions.systems.SystemFactory")
        additions.append(("system", factory.name, SYSTEMS, factory))
    for cls in _listed(declared["scheduler"], where, "SCHEDULERS"):
        if not (isinstance(cls, type) and issubclass(cls, Policy)) or not isinstance(cls.__dict__.get("name"), str):
            raise UsageError(f"{where}: SCHEDULERS holds {cls!r}, not a netsim.scheduling.Policy subclass with its own name")
        additions.append(("scheduler", cls.name, POLICIES, cls))
    for cls in _listed(declared["codec"], where, "CODECS"):
        is_codec = isinstance(cls, type) and issubclass(cls, Codec) and is_dataclass(cls)
        if not is_codec or not isinstance(cls.__dict__.get("name"), str):
            raise UsageError(f"{where}: CODECS holds {cls!r}, not a learning.codecs.Codec dataclass with its own name")
        try:
            cls.settings()
            cls()
        except (TypeError, ValueError) as error:
            raise UsageError(f"{where}: codec {cls.name}: {error}") from None
        additions.append(("codec", cls.name, CODECS, cls))
    for orchestrator in _listed(declared["orchestrator"], where, "ORCHESTRATORS"):
        _check_orchestrator(orchestrator, where, Orchestrator)
        additions.append(("orchestrator", orchestrator.name, ORCHESTRATORS, orchestrator))
    for kind, name, _, scenario in additions:
        if kind == "scenario" and scenario.model_name not in MODELS and scenario.model_name not in models:
            raise UsageError(f"{where}: scenario {name!r} names model {scenario.model_name!r}, which is neither built in nor in "
                             f"its MODELS")
    for kind, name, _, _ in additions:
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise UsageError(f"{where}: {kind} name {name!r} must be lower-case letters, digits and . _ + - "
                             "(at most 64, starting with a letter or digit)")
    taken = {"algorithm": set(ALGORITHMS), "scenario": set(SCENARIOS), "model": set(MODELS), "system": set(system_names()),
             "scheduler": set(POLICIES), "codec": set(CODECS), "orchestrator": set(ORCHESTRATORS)}
    mine = set()
    for kind, name, _, _ in additions:
        if (kind, name) in mine:
            raise UsageError(f"{where}: two of its {kind}s are named {name!r}; give each its own name")
        if name in taken[kind]:
            known = origin(kind, name)
            by = f"plugin {known['module']}" if known else "a built-in one"
            raise UsageError(f"{where}: {kind} {name!r} is already registered (by {by})")
        mine.add((kind, name))
    for kind, name, registry, thing in additions:
        registry[name] = thing
        ORIGINS[(kind, name)] = record
    LOADED[source] = module
    FILES[source] = list(files)


def _check_orchestrator(orchestrator, where: str, base: type) -> None:
    """UsageError unless ``orchestrator`` is an ``Orchestrator`` object (not its class) with a name,
    its own ``run``, ``by_messages`` a bool and ``reads`` a set of the run settings an orchestrator
    may read (those declared ``requires={"orchestrator": read_by(...)}``)."""
    from scenarios.definitions.settings import declared

    if isinstance(orchestrator, type) or not isinstance(orchestrator, base) or not isinstance(orchestrator.name, str):
        raise UsageError(f"{where}: ORCHESTRATORS holds {orchestrator!r}, not a scenarios.definitions.orchestrators.Orchestrator "
                         "object with a name")
    if type(orchestrator).run is base.run:
        raise UsageError(f"{where}: orchestrator {orchestrator.name!r} has no run of its own")
    if not isinstance(orchestrator.by_messages, bool):
        raise UsageError(f"{where}: orchestrator {orchestrator.name!r}: by_messages must be True or False")
    readable = [f.name for f in declared() if "orchestrator" in f.metadata["requires"]]
    reads = orchestrator.reads
    if not isinstance(reads, (set, frozenset)) or not all(isinstance(key, str) for key in reads):
        raise UsageError(f"{where}: orchestrator {orchestrator.name!r}: reads must be a set of setting names")
    unknown = sorted(set(reads) - set(readable))
    if unknown:
        raise UsageError(f"{where}: orchestrator {orchestrator.name!r} reads {', '.join(map(repr, unknown))}, which no "
                         f"orchestrator can read; choose from {', '.join(readable)}")


def _listed(value, where: str, attribute: str) -> list:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise UsageError(f"{where}: {attribute} must be a list")
    return list(value)


def _source_sha256(module: ModuleType) -> str | None:
    try:
        return hashlib.sha256(Path(inspect.getfile(module)).read_bytes()).hexdigest()
    except (TypeError, OSError):
        return None
