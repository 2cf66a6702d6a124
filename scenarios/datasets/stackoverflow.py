"""Stack Overflow 16k tag-classification posts, and the word vocabulary and encoding used on them.

Posts come from the tarball or its extracted folder (`stack_overflow_16k/{train,test}/<tag>/<n>.txt`).
Encoding: id 0 pads, 1 is an unknown word, words of the vocabulary take ids from 2 on, most
frequent first.
"""

from __future__ import annotations

import functools
import re
import string
import tarfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from scenarios.datasets.catalog import check_split, get_dataset
from scenarios.datasets.layout import locate
from scenarios.errors import DatasetError
from scenarios.records.reading import ReadError, gunzipped, open_regular, read_bytes

TAGS = ("csharp", "java", "javascript", "python")  # label = index in this sorted tuple
ROOT_FOLDER = "stack_overflow_16k"
VOCABULARY_SIZE = 10_000
MAX_LENGTH_TOKENS = 200
PAD_ID, UNKNOWN_ID, FIRST_WORD_ID = 0, 1, 2
MAX_POST_BYTES = 1 << 20  # the longest of the 16k posts is a few kB

_POST_NAME = re.compile(r"(?P<split>train|test)/(?P<tag>[^/]+)/(?P<number>\d+)\.txt")
# Punctuation becomes a space, not nothing: the posts use "." for line breaks ("error...using system;")
# and joining those words would invent tokens.
_PUNCTUATION_TO_SPACE = str.maketrans(string.punctuation, " " * len(string.punctuation))


def tokenize(text: str) -> list[str]:
    """Lowercased words of a post, punctuation removed, split on whitespace."""
    return text.lower().translate(_PUNCTUATION_TO_SPACE).split()


def build_vocabulary(texts: Iterable[str], size: int = VOCABULARY_SIZE) -> dict[str, int]:
    """word -> id for the `size` most frequent words (ties broken alphabetically), ids from FIRST_WORD_ID.

    Build it on the train split only, so test posts are encoded as unseen text.
    """
    counts = Counter(word for text in texts for word in tokenize(text))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:size]
    return {word: FIRST_WORD_ID + rank for rank, (word, _) in enumerate(ranked)}


def encode(texts: Iterable[str], vocabulary: dict[str, int], max_length: int = MAX_LENGTH_TOKENS) -> np.ndarray:
    """int64 [N, max_length] word ids: the first max_length tokens, unknown words UNKNOWN_ID, padded with PAD_ID."""
    rows = [[vocabulary.get(word, UNKNOWN_ID) for word in tokenize(text)[:max_length]] for text in texts]
    encoded = np.full((len(rows), max_length), PAD_ID, dtype=np.int64)
    for row_index, ids in enumerate(rows):
        encoded[row_index, : len(ids)] = ids
    return encoded


def _posts(path: Path) -> Iterator[tuple[str, str, Callable[[], bytes]]]:
    """(name relative to the dataset root, source for errors, reader of its bytes) of every .txt file.

    The reader must be called before the next item: a tarball is streamed in one pass. A post
    is at most ``MAX_POST_BYTES``; a truncated or corrupt tarball is a DatasetError wherever
    the stream breaks.
    """
    if path.is_dir():
        for file in sorted(path.rglob("*.txt")):
            yield file.relative_to(path).as_posix(), str(file), functools.partial(_read_file, file)
        return
    try:
        with open_regular(path) as stream, tarfile.open(fileobj=gunzipped(stream), mode="r|*") as tar:
            for entry in tar:
                relative = entry.name.removeprefix("./").removeprefix(f"{ROOT_FOLDER}/")
                if entry.isfile() and relative.endswith(".txt"):
                    yield relative, f"{path}:{entry.name}", functools.partial(_read_member, tar, entry, path)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise DatasetError(f"{path}: cannot read the tarball: {exc}") from exc


def _read_file(file: Path) -> bytes:
    try:
        return read_bytes(file, MAX_POST_BYTES)
    except ReadError as error:
        raise DatasetError(str(error)) from None


def _read_member(tar: tarfile.TarFile, entry: tarfile.TarInfo, path: Path) -> bytes:
    if entry.size > MAX_POST_BYTES:
        raise DatasetError(f"{path}:{entry.name}: a post of {entry.size:,} bytes, above {MAX_POST_BYTES:,}")
    try:
        return tar.extractfile(entry).read()
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise DatasetError(f"{path}: cannot read the tarball (truncated or corrupt at {entry.name}): {exc}") from None


def load_stackoverflow(data_dir: str | Path, split: str) -> tuple[list[str], np.ndarray]:
    """Post texts and labels int64 [N] (index of the tag in TAGS) of one split, ordered by tag then post number."""
    info = get_dataset("stackoverflow", kind="text")
    check_split(split)
    (path,) = locate(info, data_dir, [info.files[0].read_order])
    posts = []
    for relative, source, read in _posts(path):
        match = _POST_NAME.fullmatch(relative)
        if match is None or match["split"] != split:
            continue
        if match["tag"] not in TAGS:
            raise DatasetError(f"{source}: unknown tag folder {match['tag']!r}; expected one of {', '.join(TAGS)}")
        try:
            text = read().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{source}: not UTF-8 text: {exc}") from exc
        posts.append((TAGS.index(match["tag"]), int(match["number"]), text))
    missing = sorted(set(TAGS) - {TAGS[label] for label, _, _ in posts})
    if missing:
        raise DatasetError(f"{path}: no {split} posts for tag(s) {', '.join(missing)}")
    posts.sort()
    return [text for _, _, text in posts], np.array([label for label, _, _ in posts], dtype=np.int64)
