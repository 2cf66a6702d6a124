"""Write a matplotlib figure atomically (a temporary file, then a rename), PNG or PDF by suffix."""

from __future__ import annotations

import os
from pathlib import Path


def save_figure(fig, out_file: str | Path, dpi: int | None = None, metadata: dict[str, str] | None = None) -> Path:
    """Save ``fig`` to ``out_file`` (PDF when it ends in .pdf, else PNG) and close it; a failed
    write leaves no partial file and is one line (``scenarios.errors.WriteError``). ``dpi``: the
    style's when None; ``metadata``: PDF info or PNG text fields."""
    import matplotlib.pyplot as plt

    from scenarios.atomic import writing

    out_file = Path(out_file)
    tmp = out_file.with_name(f".{out_file.name}.{os.getpid()}.tmp")
    try:
        with writing(out_file):
            fig.savefig(tmp, format="pdf" if out_file.suffix.lower() == ".pdf" else "png", dpi=dpi, metadata=metadata)
            os.replace(tmp, out_file)
    finally:
        plt.close(fig)
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # a name too long to have been created
            pass
    return out_file
