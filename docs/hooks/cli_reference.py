"""MkDocs hook: the command reference is generated from the parsers, so it cannot drift.

A page marker ``<!-- cli-reference -->`` becomes one section per subcommand holding its
``--help`` text, exactly as ``fl-cosim COMMAND --help`` prints it.
"""

from __future__ import annotations

import argparse
import os

MARKER = "<!-- cli-reference -->"


def reference_markdown() -> str:
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal width: fix it for a stable page
    from scenarios.cli.main import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sections = ["## fl-cosim\n\n```text\n" + parser.format_help().rstrip() + "\n```\n"]
    for name, sub in subparsers.choices.items():
        sections.append(f"## fl-cosim {name}\n\n```text\n{sub.format_help().rstrip()}\n```\n")
    return "\n".join(sections)


def on_page_markdown(markdown, page, config, files):  # noqa: ARG001 (MkDocs hook signature)
    return markdown.replace(MARKER, reference_markdown()) if MARKER in markdown else markdown
