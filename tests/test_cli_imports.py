"""A command imports what it needs: every command's ``--help`` and ``datasets``, ``round-time`` and
``cell`` parse and run without torch; the top-level help lists every command as the full parser does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from scenarios.cli.main import ALL, COMMANDS, TORCH_FREE, build_parser, command_named

ROOT = Path(__file__).resolve().parents[1]


def test_the_top_level_help_is_the_full_parsers():
    assert build_parser(None).format_help() == build_parser(ALL).format_help()
    for name in COMMANDS:
        assert build_parser(name).format_help() == build_parser(ALL).format_help()


def test_the_command_is_the_first_word_past_the_global_options():
    assert command_named(["--threads", "2", "--workers", "3", "run", "--seed", "1"]) == "run"
    assert command_named(["--threads=2", "list"]) == "list"
    assert command_named(["--version"]) is None


def test_commands_that_never_train_and_every_help_import_no_torch(tmp_path):
    code = ("import contextlib, io, sys\n"
            "from scenarios.cli.main import COMMANDS, main\n"
            "for argv in ([[name, '--help'] for name in COMMANDS] + [['--help'], ['datasets', '--json'],\n"
            "             ['round-time', '--devices', '5', '--json'],\n"
            "             ['cell', 'uma-3.5ghz', '--devices', '3', '--json', '--out', str(sys.argv[1])]]):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        try:\n"
            "            main(argv)\n"
            "        except SystemExit:\n"
            "            pass\n"
            "    print(' '.join(argv[:2]), 'torch' in sys.modules, sep=',')\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "cell.png")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    seen = [line.split(",") for line in done.stdout.splitlines()]
    assert [what for what, _ in seen] == [f"{name} --help" for name in COMMANDS] + ["--help", "datasets --json", "round-time --devices",
                                                                                    "cell uma-3.5ghz"], done.stderr
    assert [what for what, torch in seen if torch != "False"] == []  # the first to import torch, and every one after it
    assert set(TORCH_FREE) == {"datasets", "round-time", "cell"}
