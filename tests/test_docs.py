"""The documentation: every block marked runnable runs as written, and the site's pages and links hold."""

import subprocess
import sys

import pytest

from doc_blocks import ROOT, documentation_pages, runnable_blocks

BLOCKS = [(page, index, code) for page in documentation_pages() for index, code in enumerate(runnable_blocks(page))]


@pytest.mark.parametrize("page,index,code", BLOCKS, ids=[f"{p.relative_to(ROOT)}#{i}" for p, i, _ in BLOCKS])
def test_runnable_block_runs(page, index, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{page}#{index}", "exec"), {"__name__": "__doc_block__"})


def test_some_blocks_are_runnable():
    assert any(page.name == "api.md" for page, _, _ in BLOCKS)


def test_no_page_speaks_of_the_development_setup():
    """The pages are for users: no development machines, sessions or sibling checkouts."""
    banned = ("../shared", "these machines", "development machine", "was lent", "the issue asks")
    for page in documentation_pages():
        text = page.read_text()
        assert not [b for b in banned if b in text], page


def test_site_builds_strict(tmp_path):
    """Broken links, missing pages and pages left out of the navigation fail the build."""
    for package in ("mkdocs", "material", "mkdocstrings"):
        pytest.importorskip(package, reason=f"{package} is not installed (pip install 'fl-cosim[docs]')")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    reference = (tmp_path / "site" / "cli" / "index.html").read_text()
    assert "usage: fl-cosim round-time" in reference  # the generated reference is in the page
    from scenarios.definitions.settings import reference as settings

    assert all(f"<code>{row['setting']}</code>" in reference for row in settings())  # and the table of the declared settings
