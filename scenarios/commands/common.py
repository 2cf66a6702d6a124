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


def add_training(parser) -> None:
    """Training settings that override the scenario's (recorded in each run's config.json)."""
    from learning.engine import BACKENDS
    from learning.models import INIT_SCHEMES
    from learning.training import OPTIMIZERS

    group = parser.add_argument_group("training settings (default: the scenario's; 'fl-cosim scenario NAME' lists them)")
    group.add_argument("--optimizer", choices=OPTIMIZERS, help="sgd (the paper's text) or adam (the authors' code: per-device state kept across rounds)")
    group.add_argument("--init", choices=INIT_SCHEMES, help="initialization: keras (the authors' code) or torch (PyTorch's defaults)")
    group.add_argument("--lr", type=float, help="local learning rate")
    group.add_argument("--momentum", type=float, help="SGD momentum (0 <= m < 1)")
    group.add_argument("--batch-size", type=int, help="local mini-batch size")
    group.add_argument("--epochs", type=int, help="local epochs per round (E)")
    group.add_argument("--backend", choices=tuple(BACKENDS), help="training engine: processes (the reference loop in "
                       "one worker process per core, the same numbers) or loop (in this process); default: the scenario's, processes")
    group.add_argument("--device", help="where training runs: auto (CUDA when present), cpu, cuda[:N] (default cpu)")


def training_overrides(args) -> dict:
    """The training settings given on the command line; ``--device auto`` resolved here."""
    keys = ("optimizer", "init", "lr", "momentum", "batch_size", "epochs", "backend", "device")
    given = {key: getattr(args, key) for key in keys if getattr(args, key, None) is not None}
    if given.get("device") == "auto":
        import torch

        given["device"] = "cuda" if torch.cuda.is_available() else "cpu"
    if given.get("device", "cpu").startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise UsageError(f"--device {given['device']}: no CUDA device on this machine (use cpu or auto)")
    return given
