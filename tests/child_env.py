"""The environment a test gives a child Python process that must import this checkout."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def checkout_environment(*, drop: tuple[str, ...] = (), **changes: str) -> dict[str, str]:
    """This process's environment with the checkout first on ``PYTHONPATH``, ``drop``'s variables
    removed and ``changes`` set. The checkout goes before what ``PYTHONPATH`` already holds rather
    than replacing it: where the project's dependencies are found through ``PYTHONPATH`` (a
    ``pip install --target`` folder, as on a machine without a package index), a child given
    only the checkout cannot import them."""
    environment = {key: value for key, value in os.environ.items() if key not in drop}
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**environment, **changes}
