"""One look for every figure: IEEE column width, fonts of at least 7 pt, and one fixed colour
and marker per algorithm label (the same in every figure, whatever else is plotted beside it)."""

from __future__ import annotations

import zlib
from contextlib import contextmanager

COLUMN_WIDTH_IN = 3.5  # IEEE two-column format, one column
FONT_PT = 8
SMALL_FONT_PT = 7  # legends and tick labels; nothing smaller

# label -> (colour, marker); user-centric variants share a hue family, baselines get their own
ALGORITHM_STYLE: dict[str, tuple[str, str]] = {
    "user-centric k=m": ("#08306b", "o"),
    "user-centric k=4": ("#2171b5", "s"),
    "user-centric k=16": ("#6baed6", "D"),
    "user-centric k=auto": ("#4292c6", "v"),
    "fedavg": ("#000000", "x"),
    "local": ("#7f7f7f", "+"),
    "oracle": ("#d62728", "*"),
    "scaffold": ("#ff7f0e", "^"),
    "ditto": ("#2ca02c", "<"),
    "pfedme": ("#9467bd", ">"),
    "fedprox": ("#8c564b", "p"),
    "cfl": ("#e377c2", "h"),
    "fedfomo": ("#bcbd22", "P"),
    "parallel-user-centric k=m": ("#17becf", "d"),
    "pfedlia": ("#393b79", "X"),
    "self-fl": ("#637939", "1"),
    "per-fedavg": ("#8c6d31", "2"),
    "fesem": ("#843c39", "3"),
    "fedproto": ("#7b4173", "4"),
}
_SPARE_COLOURS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")
_SPARE_MARKERS = ("o", "s", "^", "v", "D", "<", ">", "p")


def algorithm_style(label: str) -> dict:
    """``color`` and ``marker`` of a run label: fixed for the known labels, and for any other
    label derived from the label text alone (so it too is the same in every figure)."""
    if label in ALGORITHM_STYLE:
        colour, marker = ALGORITHM_STYLE[label]
    else:
        code = zlib.crc32(label.encode())
        colour, marker = _SPARE_COLOURS[code % len(_SPARE_COLOURS)], _SPARE_MARKERS[(code // 8) % len(_SPARE_MARKERS)]
    return {"color": colour, "marker": marker}


RC_PARAMS = {
    "font.size": FONT_PT,
    "axes.titlesize": FONT_PT,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": SMALL_FONT_PT,
    "ytick.labelsize": SMALL_FONT_PT,
    "legend.fontsize": SMALL_FONT_PT,
    "lines.linewidth": 1.0,
    "lines.markersize": 3.5,
    "axes.linewidth": 0.6,
    "grid.linewidth": 0.4,
    "pdf.fonttype": 42,  # TrueType fonts in PDFs (IEEE PDF eXpress)
    "savefig.dpi": 200,
}


@contextmanager
def ieee_style():
    """matplotlib (Agg) with the figures' rc parameters, restored afterwards."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(RC_PARAMS):
        yield plt
