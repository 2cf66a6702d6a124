"""Arguments and parsing helpers shared by several subcommands."""

from __future__ import annotations

from scenarios.errors import UsageError


def add_json(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout (nothing else)")


def add_data_dir(parser) -> None:
    parser.add_argument(
        "--data-dir",
        help="dataset folder (default: $FL_COSIM_DATA, then ~/.cache/fl-cosim/datasets)",
    )


def parse_option(text: str) -> tuple[str, object]:
    """``key=value`` with value parsed as int, float, bool, none, or kept as text."""
    if "=" not in text:
        raise UsageError(f"option {text!r} must look like key=value")
    key, raw = text.split("=", 1)
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return key, lowered == "true"
    if lowered == "none":
        return key, None
    for kind in (int, float):
        try:
            return key, kind(raw)
        except ValueError:
            pass
    return key, raw


def parse_streams(text: str | None):
    """``--streams``: a positive integer, ``auto`` (Algorithm 2) or ``m`` (one per device)."""
    if text is None or text == "m":
        return None
    if text == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"--streams must be a positive integer, 'auto' or 'm', got {text!r}") from None
    if value < 1:
        raise UsageError(f"--streams must be >= 1, got {value}")
    return value


def table(header: list[str], rows: list[list]) -> str:
    """A plain aligned text table."""
    cells = [header] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def bits(value: float) -> str:
    for unit, scale in (("Gbit", 1e9), ("Mbit", 1e6), ("kbit", 1e3)):
        if value >= scale:
            return f"{value / scale:.2f} {unit}"
    return f"{value:.0f} bit"
