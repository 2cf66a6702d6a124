"""Stack Overflow posts reader, tokenizer, vocabulary and encoding on a generated extract."""

import numpy as np
import pytest

from scenarios.datasets import build_vocabulary, encode, load_stackoverflow, tokenize
from scenarios.datasets.fakes import write_fake_stackoverflow
from scenarios.datasets.stackoverflow import FIRST_WORD_ID, PAD_ID, TAGS, UNKNOWN_ID
from scenarios.errors import DatasetError


def test_tokenize_lowercases_and_drops_punctuation():
    assert tokenize("Error...using System.Drawing; it's\tBROKEN!\n(x)") == [
        "error", "using", "system", "drawing", "it", "s", "broken", "x"]


def test_vocabulary_ranks_by_count_then_word():
    vocabulary = build_vocabulary(["b a c", "c b", "c d"], size=3)
    assert vocabulary == {"c": FIRST_WORD_ID, "b": FIRST_WORD_ID + 1, "a": FIRST_WORD_ID + 2}


def test_encode_pads_truncates_and_marks_unknown_words():
    vocabulary = {"hello": 2, "world": 3}
    encoded = encode(["Hello, world!", "world zebra hello hello"], vocabulary, max_length=3)
    assert encoded.dtype == np.int64
    assert encoded.tolist() == [[2, 3, PAD_ID], [3, UNKNOWN_ID, 2]]


@pytest.mark.parametrize("as_tarball", [True, False])
@pytest.mark.parametrize("sub_folder", ["stack_overflow", ""])
def test_posts_and_labels_in_tag_then_number_order(tmp_path, as_tarball, sub_folder):
    write_fake_stackoverflow(tmp_path / sub_folder, posts_per_tag=12, as_tarball=as_tarball)
    texts, labels = load_stackoverflow(tmp_path, "test")
    assert labels.dtype == np.int64 and labels.tolist() == [i for i in range(len(TAGS)) for _ in range(12)]
    assert texts[0].startswith('"how do I sort a list in csharp? test post 0,')
    assert texts[2].endswith("test post 2, thanks!\"\n") and texts[11].endswith("post 11, thanks!\"\n")
    assert "python? test post 11" in texts[-1]


def test_unknown_tag_folder_is_an_error(tmp_path):
    root = write_fake_stackoverflow(tmp_path, as_tarball=False)
    (root / "train" / "rust").mkdir()
    (root / "train" / "rust" / "0.txt").write_text("fn main")
    with pytest.raises(DatasetError, match=r"rust/0.txt: unknown tag folder 'rust'"):
        load_stackoverflow(tmp_path, "train")


def test_missing_extract_says_there_is_no_canonical_download(tmp_path):
    with pytest.raises(DatasetError) as err:
        load_stackoverflow(tmp_path, "train")
    message = str(err.value)
    assert "stack_overflow_16k.tar.gz" in message and str(tmp_path / "stack_overflow") in message
    assert "no canonical single-file download URL" in message
