"""Parsed datasets are kept on disk by the digest of their files and their parser's version: a
second run reads the arrays and never calls the parser; other bytes or a damaged entry parse again."""

from __future__ import annotations

import numpy as np
import pytest

from scenarios.datasets.catalog import get_dataset
from scenarios.datasets.fakes import write_fake_stackoverflow
from scenarios.datasets.layout import READ, data_digest
from scenarios.datasets.prepared import prepared_folder
from scenarios.library import sources


@pytest.fixture(autouse=True)
def fresh_caches(tmp_path, monkeypatch):
    """A cache folder of this test's own, and no arrays kept in this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    read = dict(READ)
    for cached in (sources._stackoverflow_tokens, sources._image_arrays, sources.digits_arrays):
        cached.cache_clear()
    yield
    for cached in (sources._stackoverflow_tokens, sources._image_arrays, sources.digits_arrays):
        cached.cache_clear()
    READ.clear()
    READ.update(read)


def _as_a_new_process():
    """What a second run starts with: no arrays and no files noted as read in this process."""
    sources._stackoverflow_tokens.cache_clear()
    sources.digits_arrays.cache_clear()
    READ.clear()


def _parser_refused(monkeypatch):
    def refuse(*args):
        raise AssertionError("the parser was called")

    monkeypatch.setattr(sources, "load_stackoverflow", refuse)


def test_a_second_run_of_stackoverflow_reads_the_prepared_arrays(tmp_path, monkeypatch):
    data = tmp_path / "data"
    write_fake_stackoverflow(data, posts_per_tag=5)
    tokens, labels = sources.stackoverflow_tokens(data)
    digest = data_digest(get_dataset("stackoverflow"), data)
    assert [p.name for p in prepared_folder().iterdir()] == [f"stackoverflow-tokens-v{sources.STACKOVERFLOW_VERSION}-{digest}.npz"]
    _as_a_new_process()
    _parser_refused(monkeypatch)
    again, again_labels = sources.stackoverflow_tokens(data)
    assert np.array_equal(again, tokens) and np.array_equal(again_labels, labels) and again.dtype == tokens.dtype
    assert not again.flags.writeable
    assert data_digest(get_dataset("stackoverflow"), data) == digest  # the reuse key sees the same files


def test_other_bytes_or_a_damaged_entry_parse_again(tmp_path, monkeypatch):
    data = tmp_path / "data"
    write_fake_stackoverflow(data, posts_per_tag=5)
    tokens, _ = sources.stackoverflow_tokens(data)
    (entry,) = prepared_folder().iterdir()
    entry.write_bytes(entry.read_bytes()[:100])  # cut short
    _as_a_new_process()
    assert np.array_equal(sources.stackoverflow_tokens(data)[0], tokens)  # parsed again, and stored whole again
    assert np.array_equal(np.load(entry)["a0"], tokens)
    other = tmp_path / "other"
    write_fake_stackoverflow(other, posts_per_tag=6)
    _as_a_new_process()
    assert sources.stackoverflow_tokens(other)[0].shape[0] == 6 * 4 * 2  # not the 5-per-tag entry
    assert len(list(prepared_folder().iterdir())) == 2


def test_the_digits_are_read_without_scikit_learn_the_second_time(monkeypatch):
    images, labels = sources.digits_arrays()
    _as_a_new_process()
    monkeypatch.setattr(sources, "_parse_digits", lambda: pytest.fail("the parser was called"))
    again, again_labels = sources.digits_arrays()
    assert np.array_equal(again, images) and np.array_equal(again_labels, labels) and images.shape == (1797, 8, 8)


def test_an_unwritable_cache_is_only_slower(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # the cache folder cannot be made under a file
    data = tmp_path / "data"
    write_fake_stackoverflow(data, posts_per_tag=5)
    assert sources.stackoverflow_tokens(data)[0].shape[0] == 5 * 4 * 2
