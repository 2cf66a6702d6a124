"""``fl-cosim``: the command line. Bad input gets one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

from scenarios.cli import (cell, compare, datasets, export, lambda_study, listing, penalty, plot, reproduce, retime,
                               round_time, run, scenario, streams, sweep)
from scenarios.cli.common import OnceParser
from scenarios.errors import UsageError
from scenarios.log import cli_messages
from scenarios.records.provenance import fl_cosim_version
from scenarios.records.atomic import CREATED, finite, output_name, remove_empty_created
from scenarios.definitions.settings import Setting

PIPE_CLOSED_EXIT = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader went away
THREADS = Setting(int, low=1, high=1024)
WORKERS = Setting(int, low=1, high=1024)

COMMANDS = {
    "run": run,
    "compare": compare,
    "sweep": sweep,
    "streams": streams,
    "lambda-study": lambda_study,
    "round-time": round_time,
    "plot": plot,
    "retime": retime,
    "export": export,
    "reproduce": reproduce,
    "list": listing,
    "datasets": datasets,
    "scenario": scenario,
    "cell": cell,
    "penalty": penalty,
}


EXIT_DONE, EXIT_DIVERGED, EXIT_USAGE, EXIT_INTERNAL_ERROR = 0, 1, 2, 3  # 130: interrupted; 141: stdout closed


def save_traceback() -> str:
    """The current exception's traceback in a new file of the temporary folder; its path."""
    import tempfile
    import traceback

    handle, path = tempfile.mkstemp(prefix="fl-cosim-error-", suffix=".txt")
    with os.fdopen(handle, "w") as file:
        traceback.print_exc(file=file)
    return path


class OneLineParser(OnceParser):
    """argparse, but a usage error is one line (and exit status 2)."""

    def error(self, message):
        raise UsageError(f"{message} (see {self.prog} --help)")


ALL = "all"  # build_parser: every command's parser
TORCH_FREE = ("datasets", "cell", "round-time", "plot", "retime", "penalty")  # commands that never train: no torch for them


class _HelpLine(Exception):
    """Raised by ``_HelpRecorder`` with a command's one-line help."""


class _HelpRecorder:
    """Stands for argparse's subparsers in a command's ``add_parser``: takes the help line of its
    first call and stops it there, before the command imports what its options need."""

    def add_parser(self, name, **keywords):
        raise _HelpLine(keywords.get("help"))


def help_line(module) -> str | None:
    try:
        module.add_parser(_HelpRecorder())
    except _HelpLine as line:
        return line.args[0]
    return None


def command_named(argv: list[str]) -> str | None:
    """The command ``argv`` names: its first word that is neither a global option nor its value."""
    words = iter(argv)
    for word in words:
        if word in ("--threads", "--workers"):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def build_parser(command: str | None = ALL) -> argparse.ArgumentParser:
    """The parser with ``command``'s options (``ALL``: every command's; None: none, as for
    ``--help``); every other command is listed with its help line, so what a command does not
    need (torch, for most) is not imported to parse it."""
    parser = OneLineParser(
        prog="fl-cosim",
        description="Wireless network co-simulation testbed for personalized federated learning: "
        "a SimPy clock drives PyTorch training, so accuracy is measured against simulated time and bits.",
    )
    parser.add_argument("--version", action="version", version=f"fl-cosim {fl_cosim_version()}")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads of this process (default 1: fastest for many small local updates here)")
    parser.add_argument("--workers", type=int,
                        help="worker processes of the 'processes' training backend, one torch thread each "
                        "(default: the machine's cores; 1 trains in this process)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name, module in COMMANDS.items():
        if command in (ALL, name):
            module.add_parser(subparsers)
        else:
            subparsers.add_parser(name, help=help_line(module))
    from scenarios.plugins import KINDS

    kinds = [f"{kind}s" for kind in KINDS]
    for command in subparsers.choices.values():
        command.add_argument("--plugin", action="append", default=[], metavar="PATH_OR_MODULE",
                             help=f"load {', '.join(kinds[:-1])} and {kinds[-1]} from a .py file, a folder of them or "
                             "a module, repeatable (see docs/extending.md)")
    return parser


def set_threads(count: int, workers: int | None = None) -> None:
    import torch

    from learning.engine.workers import set_workers

    torch.set_num_threads(count)
    if workers is not None:
        set_workers(workers)


def reopen_closed_streams() -> set[int]:
    """Put ``/dev/null`` on each of file descriptors 0, 1, 2 that is closed (``>&-``, ``2>&-``):
    no file opened later takes its number (a result file must never receive what is printed),
    and messages and progress go nowhere instead of failing. Returns the closed ones."""
    closed = set()
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.add(fd)
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if 1 in closed and sys.stdout is None:
        sys.stdout = open(1, "w", closefd=False)
    if 2 in closed and sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False)
    return closed


def say(text: str) -> None:
    """One line on stderr, best-effort (a closed or broken stderr loses it, nothing more)."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


@contextmanager
def ctrl_c_interrupts() -> Iterator[None]:
    """While the command runs (in the main thread): SIGINT raises KeyboardInterrupt (exit 130),
    even where this process was started with SIGINT ignored, as a shell starts a script's
    background jobs: a Ctrl-C or ``kill -INT`` never goes unheard while the command reports
    success."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if before is not None:  # None: a handler not set from Python, which cannot be put back
            signal.signal(signal.SIGINT, before)


def main(argv=None) -> int:
    with ctrl_c_interrupts():
        status = _main(argv)
    drop_unwritable_output()
    return status


def _main(argv=None) -> int:
    closed = reopen_closed_streams()
    argv = sys.argv[1:] if argv is None else [str(arg) for arg in argv]
    made_before = len(CREATED)
    try:
        named = command_named(argv)
        parser = build_parser(named if named in COMMANDS or named is None else ALL)
        args = parser.parse_args(argv)
        # recorded in figures' metadata, as UTF-8 text (a non-UTF-8 name's bytes as \x escapes)
        args.command_line = shlex.join(["fl-cosim", *(os.fsencode(arg).decode("utf-8", "backslashreplace") for arg in argv)])
        if args.command is None:
            parser.print_help()
            return EXIT_USAGE
        for option in ("out", "runs"):  # every command's output paths: an empty one names nothing
            output_name(getattr(args, option, None), f"--{option}")
        THREADS.check("--threads", args.threads)
        if args.workers is not None:
            WORKERS.check("--workers", args.workers)
        if args.command not in TORCH_FREE:
            set_threads(args.threads, args.workers)
        from scenarios.plugins import load_installed, load_plugins

        load_installed()
        load_plugins(args.plugin)
        with cli_messages():
            data, text, *status = COMMANDS[args.command].execute(args)
    except UsageError as error:
        remove_empty_created(made_before)  # a failed command leaves no empty output folder it made
        say(f"fl-cosim: error: {error}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        say("fl-cosim: interrupted")
        return 130
    except OSError as error:  # a fault no layer named (the writers name their path: WriteError)
        remove_empty_created(made_before)
        where = f" ({error.filename})" if error.filename else ""
        say(f"fl-cosim: error: {error.strerror or error}{where}")
        return EXIT_USAGE
    except Exception as error:  # a bug, not the user's input: one line, and the traceback kept for a report
        summary = str(error).splitlines()[0] if str(error) else ""
        say(f"fl-cosim: internal error ({error.__class__.__name__}: {summary}); the traceback is in "
            f"{save_traceback()}; please report it")
        return EXIT_INTERNAL_ERROR
    return show(json.dumps(finite(data), indent=2, allow_nan=False) if getattr(args, "json", False) else text,
                1 in closed) or (status[0] if status else 0)


def show(text: str, closed: bool) -> int:
    """Print the command's output; 0, or the exit status of an output that could not be written:
    141 when stdout is closed or its reader went away (| head), 2 when writing it failed (a full
    disk), each with one line on stderr where it can be written (what stays unwritten is
    dropped as ``main`` returns: ``drop_unwritable_output``)."""
    if closed:
        say("fl-cosim: error: stdout is closed; the output is lost")
        return PIPE_CLOSED_EXIT
    try:
        print(text, flush=True)
        return 0
    except BrokenPipeError:  # the reader went away (| head): no traceback, the conventional status
        return PIPE_CLOSED_EXIT
    except OSError as error:
        say(f"fl-cosim: error: cannot write the output: {error.strerror or error}")
        return EXIT_USAGE


def drop_unwritable_output() -> None:
    """What stdout and stderr still hold and cannot write is dropped (their reader went away:
    ``2>&1 | head``, where the progress broke the pipe): Python would flush it at exit, fail,
    and end with status 120 in place of the command's. Where Python writes them unbuffered
    (``PYTHONUNBUFFERED``), nothing is ever held."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            to_devnull(stream)


def to_devnull(stream) -> None:
    """Point ``stream``'s file descriptor at ``/dev/null`` (best-effort)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(null, stream.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    finally:
        os.close(null)


if __name__ == "__main__":
    sys.exit(main())
