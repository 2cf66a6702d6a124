"""A command imports what it needs: every command's ``--help``, and the commands that never train
(``TORCH_FREE``: ``datasets``, ``round-time``, ``cell``, and ``plot``, ``retime`` and ``penalty`` on
result folders), parse and run without torch; the top-level help lists every command as the full
parser does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scenarios.cli.main import ALL, COMMANDS, TORCH_FREE, build_parser, command_named, main

ROOT = Path(__file__).resolve().parents[1]


def test_the_top_level_help_is_the_full_parsers():
    assert build_parser(None).format_help() == build_parser(ALL).format_help()
    for name in COMMANDS:
        assert build_parser(name).format_help() == build_parser(ALL).format_help()


def test_the_command_is_the_first_word_past_the_global_options():
    assert command_named(["--threads", "2", "--workers", "3", "run", "--seed", "1"]) == "run"
    assert command_named(["--threads=2", "list"]) == "list"
    assert command_named(["--version"]) is None


def test_commands_that_never_train_and_every_help_import_no_torch(tmp_path, capsys):
    """Each command's ``--help``, and the commands that never train, on a run's folders (a
    normalized system's and a cell's), in one fresh process: the first to import torch is named."""
    for system in ("wireless-slow-ul", "uma-3.5ghz"):
        assert main(["run", "--algorithm", "fedavg", "--system", system, "--rounds", "1", "--out", str(tmp_path / system),
                     "--no-figure", "--quiet"]) == 0
    capsys.readouterr()
    normalized, cell = (str(next((tmp_path / system).iterdir())) for system in ("wireless-slow-ul", "uma-3.5ghz"))
    commands = [[name, "--help"] for name in COMMANDS] + [
        ["--help"], ["datasets", "--json"], ["round-time", "--devices", "5", "--json"],
        ["cell", "uma-3.5ghz", "--devices", "3", "--json", "--out", str(tmp_path / "cell.png")],
        ["plot", normalized, cell, "--out", str(tmp_path / "plot.png")], ["retime", normalized, "--system", "wired", "--json"],
        ["penalty", cell, "--json"]]
    code = ("import contextlib, io, json, sys\n"
            "from scenarios.cli.main import main\n"
            "for argv in json.loads(sys.argv[1]):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        try:\n"
            "            status = main(argv)\n"
            "        except SystemExit as stop:\n"
            "            status = stop.code\n"
            "    print(' '.join(argv[:2]), status, 'torch' in sys.modules, sep=',')\n")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(commands)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    seen = [line.split(",") for line in done.stdout.splitlines()]
    assert [(what, status) for what, status, _ in seen] == [(" ".join(argv[:2]), "0") for argv in commands], done.stderr
    assert [what for what, _, torch in seen if torch != "False"] == []  # the first to import torch, and every one after it
    assert set(TORCH_FREE) == {"datasets", "round-time", "cell", "plot", "retime", "penalty"}
