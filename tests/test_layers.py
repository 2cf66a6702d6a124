"""The layering holds at run time, not only in the source: the learning layer loads no SimPy,
the network layer no PyTorch, and the learner-clock contract neither, nor NumPy (each checked
in a fresh interpreter)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("module, absent", [
    ("contract", "simpy"),
    ("contract", "torch"),
    ("contract", "numpy"),
    ("learning.algorithms", "simpy"),
    ("netsim", "torch"),
    ("netsim.clock.engine", "torch"),
])
def test_importing_a_layer_leaves_the_other_unloaded(module, absent):
    code = f"import sys, {module}; print({absent!r} in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


PACKAGES = ("contract", "netsim", "learning", "scenarios", "figures")
MAX_PARAMETERS = 8


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _runtime_nodes(tree: ast.AST, type_checking: bool = False):
    """Every node but those under ``if TYPE_CHECKING:`` (imports there never run), or every
    node with ``type_checking``."""
    for node in ast.iter_child_nodes(tree):
        if not type_checking and isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            continue
        yield node
        yield from _runtime_nodes(node, type_checking)


def _imports(name: str, path: Path, modules: dict, type_checking: bool = False) -> set[str]:
    """The project modules ``name`` imports at run time, function-level imports included (with
    ``type_checking``, those under ``if TYPE_CHECKING:`` too)."""
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text()), type_checking):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
            target = ".".join(base[:len(base) - node.level + 1] + [node.module or ""]).strip(".") if node.level else node.module
            submodules = {f"{target}.{alias.name}" for alias in node.names} & modules.keys()
            found.update(submodules)
            if target in modules and len(submodules) < len(node.names):
                found.add(target)
    return found - {name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _assert_acyclic(graph: dict[str, set[str]]) -> None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for other in sorted(graph[name]):
            chain = path + [name]
            assert state.get(other) != 1, "import cycle: " + " -> ".join(chain[chain.index(other):] + [other])
            if other not in state:
                visit(other, path + [name])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])


def test_no_import_cycle_among_the_project_modules():
    _assert_acyclic(_graph())


def test_netsim_modules_form_no_cycle_counting_every_import():
    """In ``netsim/`` even the imports that never run (``if TYPE_CHECKING:``, for annotations)
    point down: a module below another names it through a protocol it declares or imports
    (``netsim.physical_protocol``), never by importing it, so the package can be cut in rooms."""
    modules = {name: path for name, path in _modules().items() if _package(name) == "netsim"}
    graph = {name: _imports(name, path, modules, type_checking=True) for name, path in modules.items()}
    assert any(graph.values())  # the walk sees netsim's imports
    _assert_acyclic(graph)


def test_no_function_takes_more_than_eight_parameters():
    long = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                count = len(arguments) - (bool(arguments) and arguments[0].arg in ("self", "cls"))
                if count > MAX_PARAMETERS:
                    long.append(f"{name}.{node.name} ({count})")
    assert not long, f"functions over {MAX_PARAMETERS} parameters: {', '.join(long)}"


def _package(name: str) -> str:
    return name.split(".")[0]


def test_only_the_commands_the_api_and_the_reports_import_the_figures():
    """The arrows run down: nothing that simulates or runs (``scenarios.execution`` above all)
    imports ``figures/``; a command, the API or a report hands it what to draw."""
    drawers = ("scenarios.cli", "scenarios.reports", "scenarios.api")
    upward = sorted(f"{name} -> {other}" for name, imports in _graph().items() for other in imports
                    if _package(other) == "figures" and _package(name) != "figures" and not name.startswith(drawers))
    assert not upward, f"modules importing figures/: {', '.join(upward)}"


def test_figures_only_draw_what_the_result_folder_module_reads():
    """``figures/`` imports of the project only itself and the result folder's types (curves,
    errors) and atomic writing: no clock (it never re-times), no runner, no learning."""
    allowed = {"scenarios.records.result_folder", "scenarios.records.atomic", "scenarios.errors"}
    for name, imports in _graph().items():
        if _package(name) == "figures":
            reached = {m for m in imports if _package(m) != "figures"}
            assert reached <= allowed, f"{name} imports {sorted(reached - allowed)}"
    code = "import sys, scenarios.records.result_folder; print(sorted(m for m in ('torch', 'simpy') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


READING_CALLS = {"open", "read_text", "read_bytes", "load", "loads", "DictReader", "reader", "loadtxt", "genfromtxt"}


def test_no_figure_opens_a_file():
    """A figure is drawn from what it is handed (curves, a study, a table); reading and
    checking files is ``scenarios.records``' (``reading``, ``result_folder``)."""
    found = []
    for name, path in _modules().items():
        if _package(name) == "figures":
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call):
                    called = getattr(node.func, "attr", getattr(node.func, "id", None))
                    if called in READING_CALLS:
                        found.append(f"{name}:{node.lineno} {called}")
    assert not found, f"figures/ reading files: {', '.join(found)}"


def test_every_name_the_benchmarks_and_doc_examples_import_exists():
    """Scripts no test runs (``benchmarks/``, ``docs/examples/``) still import only names that
    exist: a renamed or moved function breaks them here, not in a reader's hands."""
    import importlib

    missing = []
    for path in sorted((ROOT / "benchmarks").glob("*.py")) + sorted((ROOT / "docs").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] in PACKAGES:
                module = importlib.import_module(node.module)
                missing += [f"{path.relative_to(ROOT)}: {node.module}.{alias.name}" for alias in node.names
                            if not hasattr(module, alias.name) and f"{node.module}.{alias.name}" not in _modules()]
    assert not missing


ROOM_RULES = [  # (room, rooms it never imports): netsim's rooms, see netsim/__init__.py
    ("netsim.transport", ("netsim.clock", "netsim.normalized")),
    ("netsim.radio", ("netsim.clock",)),
    ("netsim.normalized", ("netsim.clock", "netsim.radio", "netsim.dynamics")),
    ("netsim.dynamics", ("netsim.clock",)),
    ("netsim.kind", ("netsim.clock", "netsim.radio", "netsim.normalized", "netsim.dynamics")),
    ("netsim.scheduling", ("netsim.clock", "netsim.transport", "netsim.radio", "netsim.normalized", "netsim.dynamics")),
    ("netsim.physical_protocol", ("netsim.clock", "netsim.transport", "netsim.radio", "netsim.normalized", "netsim.dynamics")),
]


def _within(name: str, room: str) -> bool:
    return name == room or name.startswith(room + ".")


@pytest.mark.parametrize("room, never", ROOM_RULES)
def test_netsim_rooms_import_only_downward(room, never):
    """Each room's rule, counting every import (function-level and ``if TYPE_CHECKING:`` too):
    a round never calls its orchestrator back, the normalized system knows no cell."""
    modules = {name: path for name, path in _modules().items() if _package(name) == "netsim"}
    inside = [name for name in modules if _within(name, room)]
    assert inside, f"no module in {room}"
    wrong = sorted(f"{name} -> {other}" for name in inside
                   for other in _imports(name, modules[name], modules, type_checking=True)
                   if any(_within(other, far) for far in never))
    assert not wrong, f"{room} imports what it must not: {', '.join(wrong)}"


def test_only_the_clock_imports_the_orchestrators():
    """``netsim.clock`` (the round loop, buffered and tiered aggregation) is imported in netsim
    only by itself and by the package's front door ``netsim/__init__.py``."""
    modules = {name: path for name, path in _modules().items() if _package(name) == "netsim"}
    wrong = sorted(f"{name} -> {other}" for name, path in modules.items()
                   if name != "netsim" and not _within(name, "netsim.clock")
                   for other in _imports(name, path, modules, type_checking=True) if _within(other, "netsim.clock"))
    assert not wrong, f"modules importing the orchestrators: {', '.join(wrong)}"


def test_the_nr_link_layer_imports_nothing_else_of_netsim():
    modules = {name: path for name, path in _modules().items() if _package(name) == "netsim"}
    wrong = sorted(f"{name} -> {other}" for name in modules if _within(name, "netsim.radio.link")
                   for other in _imports(name, modules[name], modules, type_checking=True)
                   if not _within(other, "netsim.radio.link"))
    assert not wrong, f"netsim.radio.link reaching out: {', '.join(wrong)}"
