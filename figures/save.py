"""Write a matplotlib figure atomically (a temporary file, then a rename), PNG or PDF by suffix."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path


def save_figure(fig, out_file: str | Path, dpi: int | None = None, metadata: dict[str, str] | None = None,
                close: bool = True) -> Path:
    """Save ``fig`` to ``out_file`` (PDF when it ends in .pdf, else PNG; its folder made where
    missing) and close it (unless ``close`` is False: another format follows); a failed write
    leaves no partial file and is one line (``scenarios.errors.WriteError``). ``dpi``: the
    style's when None; ``metadata``: PDF info or PNG text fields."""
    import matplotlib.pyplot as plt

    from scenarios.records.atomic import TMP_SUFFIX, current_umask, remove_stale_staging, writing

    out_file = Path(out_file)
    tmp = None
    try:
        with writing(out_file):
            out_file.parent.mkdir(parents=True, exist_ok=True)  # as a run's result folder is made
            remove_stale_staging(out_file.parent)  # what a killed plot or cell left there
            # drawn in memory first: matplotlib's PDF writer, failing mid-stream on a full disk, hides the
            # OSError behind an AttributeError of its own; only the plain write below meets the disk
            drawn = io.BytesIO()
            fig.savefig(drawn, format="pdf" if out_file.suffix.lower() == ".pdf" else "png", dpi=dpi, metadata=metadata)
            fd, name = tempfile.mkstemp(dir=out_file.parent, prefix=f".{out_file.name}.{os.getpid()}.", suffix=TMP_SUFFIX)
            tmp = Path(name)
            os.fchmod(fd, 0o666 & ~current_umask())  # mkstemp makes it private (0600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(drawn.getbuffer())
            os.replace(tmp, out_file)
    finally:
        if close:
            plt.close(fig)
        if tmp is not None:
            tmp.unlink(missing_ok=True)
    return out_file
