"""The code blocks that the documentation marks runnable (``<!-- runnable -->`` before a python block)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKED = re.compile(r"<!-- runnable -->\s*```python\n(.*?)```", re.S)


def documentation_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def runnable_blocks(page: Path) -> list[str]:
    return MARKED.findall(page.read_text())
