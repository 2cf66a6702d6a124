"""MkDocs hook: the command reference is generated from the parsers, and the parsers from the
settings' declarations, so neither can drift.

A page marker ``<!-- cli-reference -->`` becomes one section per subcommand holding its
``--help`` text, exactly as ``fl-cosim COMMAND --help`` prints it; ``<!-- settings-reference -->``
becomes the table of every declared run setting (``scenarios.definitions.settings.reference``):
its flag, sweep key, ``RunSpec`` field, default, allowed values and doc.
"""

from __future__ import annotations

import argparse
import os

MARKER = "<!-- cli-reference -->"
SETTINGS_MARKER = "<!-- settings-reference -->"


def reference_markdown() -> str:
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal width: fix it for a stable page
    from scenarios.cli.main import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sections = ["## fl-cosim\n\n```text\n" + parser.format_help().rstrip() + "\n```\n"]
    for name, sub in subparsers.choices.items():
        sections.append(f"## fl-cosim {name}\n\n```text\n{sub.format_help().rstrip()}\n```\n")
    return "\n".join(sections)


def settings_markdown() -> str:
    from scenarios.definitions.settings import reference

    def cell(text) -> str:
        return "-" if text is None else str(text).replace("|", "\\|")

    from learning.options import allowed_text, default_words, doc_of, field_setting
    from scenarios.cli.common import option_flags

    rows = ["| flag (`run`, `compare`) | sweep key | `RunSpec` field | default | allowed | what |", "|---|---|---|---|---|---|"]
    for row in reference():
        rows.append(f"| `{cell(row['flag'])}` | {cell(row['sweep'])} | `{row['setting']}` | {cell(row['default'])} "
                    f"| {cell(row['allowed'])} | {cell(row['doc'])} |")
    for flag, (cls, f) in option_flags().items():  # algorithm options with a flag of their own
        rows.append(f"| `{flag}` | options.{f.name} | `options.{f.name}` | {cell(default_words(f))} "
                    f"| {cell(allowed_text(field_setting(cls, f), f.metadata.get('requires', {})))} | {cell(doc_of(f))} |")
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown, page, config, files):  # noqa: ARG001 (MkDocs hook signature)
    if SETTINGS_MARKER in markdown:
        markdown = markdown.replace(SETTINGS_MARKER, settings_markdown())
    return markdown.replace(MARKER, reference_markdown()) if MARKER in markdown else markdown
