"""Registry of the datasets the testbed reads: their files, known-good md5s, download URLs,
where they are looked for, and the status report built from it.

Only md5s that are published (or, for repacks, recorded in the shared SOURCES.md) are listed;
a file without one reports verified=None rather than pretending to be checked.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scenarios.datasets.layout import locate
from scenarios.errors import DatasetError, UsageError

DATA_DIR_ENV_VAR = "FL_COSIM_DATA"
EMNIST_SPLITS = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
SPLITS = ("train", "test")


@dataclass(frozen=True)
class DataFile:
    """One file as published, the unpacked forms readers also accept, and its known-good md5s."""

    name: str
    part: str = ""  # what it holds for split-wise readers: "train-images", "test-labels", ...; "" = everything
    md5s: Mapping[str, str] = field(default_factory=dict)  # md5 -> where that md5 is known from
    stand_ins: tuple[str, ...] = ()  # uncompressed file or extracted folder; no md5 is known for these

    @property
    def status_order(self) -> tuple[str, ...]:
        """Names to look for when reporting status: the published (checkable) form first."""
        return (self.name, *self.stand_ins)

    @property
    def read_order(self) -> tuple[str, ...]:
        """Names to look for when reading: unpacked forms first, they need no decompression."""
        return (*self.stand_ins, self.name)


@dataclass(frozen=True)
class DatasetInfo:
    """A dataset: how it is read, where it is looked for, what it consists of, where it comes from."""

    name: str
    kind: str  # which reader: "idx", "cifar" or "text"
    description: str
    # sub-folders of the data dir searched in order ("" is the data dir itself); downloads go to the first
    folders: tuple[str, ...]
    files: tuple[DataFile, ...]
    base_url: str | None = None  # files (or the archive) are fetched from base_url + name; None: no canonical URL
    archive: DataFile | None = None  # set when the files are only published inside this zip
    download_note: str = ""

    def file(self, part: str) -> DataFile:
        """The file holding `part` (e.g. "train-images")."""
        return next(f for f in self.files if f.part == part)

    @property
    def how_to_get(self) -> str:
        """One clause telling the user how to obtain the files."""
        if self.base_url is None:
            return f"copy the files there ({self.download_note})"
        return f"get them with `fl-cosim datasets download {self.name}` or copy the files there"


def _idx_files(prefix: str, test_word: str, md5s: tuple[str, ...], source: str) -> tuple[DataFile, ...]:
    """The four idx files of an MNIST-like dataset, in the order train images/labels, test images/labels."""
    files = []
    for split, word in (("train", "train"), ("test", test_word)):
        for role, stem in (("images", "images-idx3"), ("labels", "labels-idx1")):
            name = f"{prefix}{word}-{stem}-ubyte.gz"
            files.append(DataFile(name, f"{split}-{role}", {md5s[len(files)]: source}, (name[: -len(".gz")],)))
    return tuple(files)


_TORCHVISION = "published list (torchvision)"
# EMNIST per-file md5s as listed identically by deeplearning4j (EMnistResourceConstants) and the
# numpyvision/mnists package (_emnist.py): train images, train labels, test images, test labels.
_EMNIST_SOURCE = "published lists (deeplearning4j, mnists package)"
_EMNIST_MD5S = {
    "byclass": ("712dda0bd6f00690f32236ae4325c377", "ee299a3ee5faf5c31e9406763eae7e43",
                "1435209e34070a9002867a9ab50160d7", "7a0f934bd176c798ecba96b36fda6657"),
    "bymerge": ("4a792d4df261d7e1ba27979573bf53f3", "491be69ef99e1ab1f5b7f9ccc908bb26",
                "8eb5d34c91f1759a55831c37ec2a283f", "c13f4cd5211cdba1b8fa992dae2be992"),
    "balanced": ("4041b0d6f15785d3fa35263901b5496b", "7a35cc7b2b7ee7671eddf028570fbd20",
                 "6818d20fe2ce1880476f747bbc80b22b", "acd3694070dcbf620e36670519d4b32f"),
    "letters": ("8795078f199c478165fe18db82625747", "c16de4f1848ddcdddd39ab65d2a7be52",
                "382093a19703f68edac6d01b8dfdfcad", "d4108920cd86601ec7689a97f2de7f59"),
    "digits": ("d2662ecdc47895a6bbfce25de9e9a677", "2223fcfee618ac9c89ef20b6e48bcf9e",
               "a159b8b3bd6ab4ed4793c1cb71a2f5cc", "8afde66ea51d865689083ba6bb779fac"),
    "mnist": ("3663598a39195d030895b6304abb5065", "6c092f03c9bb63e678f80f8bc605fe37",
              "fb51b6430fc4dd67deaada1bf25d4524", "ae7f6be798a9a5d5f2bd32e078a402dd"),
}
_EMNIST_ZIP = DataFile("gzip.zip", md5s={"58c8d27c78d21e728a6bc7b3cc06412e": "published archive (torchvision list)"})


def _emnist(split: str) -> DatasetInfo:
    return DatasetInfo(
        name=f"emnist-{split}",
        kind="idx",
        description=f"EMNIST {split}: handwritten characters, 28x28 grey (stored transposed)",
        folders=("EMNIST", "EMNIST/raw", "EMNIST/gzip", "EMNIST/raw/gzip", "gzip", ""),
        files=_idx_files(f"emnist-{split}-", "test", _EMNIST_MD5S[split], _EMNIST_SOURCE),
        base_url="https://biometrics.nist.gov/cs_links/EMNIST/",
        archive=_EMNIST_ZIP,
        download_note="published only inside gzip.zip (about 535 MB, all splits)",
    )


def _cifar(name: str, label: str, tarball: DataFile) -> DatasetInfo:
    return DatasetInfo(
        name=name,
        kind="cifar",
        description=f"{label}: 32x32 colour images, python pickles",
        folders=(label.replace("-", ""), name, ""),
        files=(tarball,),
        base_url="https://www.cs.toronto.edu/~kriz/",
    )


DATASETS: dict[str, DatasetInfo] = {
    info.name: info
    for info in (
        DatasetInfo(
            name="mnist",
            kind="idx",
            description="MNIST handwritten digits, 28x28 grey, 60000 train / 10000 test",
            folders=("MNIST", "MNIST/raw", "mnist", ""),
            files=_idx_files("", "t10k", ("f68b3c2dcbeaaa9fbdd348bbdeb94873", "d53e105ee54ea40749a09fcbcd1e9432",
                                          "9fb629c4189551a2d022fa330f9573f3", "ec29112dd5afa0611ce80d1b7f02629c"),
                             _TORCHVISION),
            base_url="https://ossci-datasets.s3.amazonaws.com/mnist/",
        ),
        DatasetInfo(
            name="fashion-mnist",
            kind="idx",
            description="Fashion-MNIST clothing images, 28x28 grey, 60000 train / 10000 test",
            folders=("FashionMNIST", "FashionMNIST/raw", "fashion-mnist", ""),
            files=_idx_files("", "t10k", ("8d4fb7e6c68d591d4c3dfef9ec88bf0d", "25c81989df183df01b3e8a0aad5dffbe",
                                          "bef4ecab320f06d8554ea6380940ec79", "bb300cfdad3c16e7a12a480ee83cd310"),
                             _TORCHVISION),
            base_url="http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
        ),
        *(_emnist(split) for split in EMNIST_SPLITS),
        _cifar("cifar10", "CIFAR-10", DataFile(
            "cifar-10-python.tar.gz",
            md5s={"c58f30108f718f92721af3b95e74349a": "published tarball (cs.toronto.edu, torchvision list)",
                  "13efbcca55d4010206664466b6fb7b23": "known-good lossless repack (shared SOURCES.md)"},
            stand_ins=("cifar-10-batches-py",))),
        _cifar("cifar100", "CIFAR-100", DataFile(
            "cifar-100-python.tar.gz",
            md5s={"eb9058c3a382ffc7106e4002c42a8d85": "published tarball (torchvision list)"},
            stand_ins=("cifar-100-python",))),
        DatasetInfo(
            name="stackoverflow",
            kind="text",
            description="Stack Overflow 16k posts, 4 tags (csharp, java, javascript, python), 8000 train / 8000 test",
            folders=("stack_overflow", "stackoverflow", ""),
            files=(DataFile(
                "stack_overflow_16k.tar.gz",
                md5s={"e951a63289bdb128d490870919520783": "known-good extract (shared SOURCES.md)"},
                stand_ins=("stack_overflow_16k",)),),
            download_note="this 16k-post extract has no canonical single-file download URL",
        ),
    )
}


def get_dataset(name: str, kind: str | None = None) -> DatasetInfo:
    """The registry entry for `name` (of reader `kind` when given); UsageError listing the valid names otherwise."""
    candidates = [n for n, info in DATASETS.items() if kind is None or info.kind == kind]
    if name not in candidates:
        raise UsageError(f"unknown {kind + ' ' if kind else ''}dataset {name!r}; known: {', '.join(candidates)}")
    return DATASETS[name]


def check_split(split: str) -> None:
    """UsageError unless split is "train" or "test"."""
    if split not in SPLITS:
        raise UsageError(f"unknown split {split!r}; use one of: {', '.join(SPLITS)}")


def resolve_data_dir(cli_value: str | None = None) -> Path:
    """The data directory: the explicit value, else $FL_COSIM_DATA, else the per-user cache.

    The cache is $XDG_CACHE_HOME/fl-cosim/datasets (XDG_CACHE_HOME is honoured only when
    absolute, as the XDG spec asks), defaulting to ~/.cache/fl-cosim/datasets. Nothing is created.
    """
    for value in (cli_value, os.environ.get(DATA_DIR_ENV_VAR)):
        if value:
            return Path(value).expanduser()
    return user_cache() / "datasets"


def user_cache() -> Path:
    """$XDG_CACHE_HOME/fl-cosim (honoured only when absolute), else ~/.cache/fl-cosim."""
    xdg_cache = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg_cache) if os.path.isabs(xdg_cache) else Path.home() / ".cache") / "fl-cosim"


def file_md5(path: str | Path, chunk_bytes: int = 1 << 20) -> str:
    """Hex md5 of a file, read in chunks so a 170 MB tarball never sits in memory."""
    from scenarios.records.reading import open_regular

    digest = hashlib.md5()
    with open_regular(path) as stream:
        while chunk := stream.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()


def _verify(data_file: DataFile, path: Path) -> tuple[bool | None, str]:
    """(verdict, note) for one found file: True with the md5's source, False, or None when uncheckable."""
    if path.name != data_file.name:
        return None, f"{path.name}: unpacked form, no md5 known for it"
    if not data_file.md5s:
        return None, f"{path.name}: no published md5"
    md5 = file_md5(path)
    if md5 in data_file.md5s:
        return True, data_file.md5s[md5]
    return False, f"{path.name}: md5 {md5} matches no known md5 (corrupt or another version)"


def _status(info: DatasetInfo, data_dir: Path, verify: bool) -> dict:
    """The status row of one dataset (see dataset_status)."""
    row = {"name": info.name, "found": False, "path": None, "verified": None}
    try:
        paths = locate(info, data_dir, [f.status_order for f in info.files], reading=False)
    except DatasetError as exc:
        return {**row, "detail": str(exc)}
    folder = paths[0].parent
    row.update(found=True, path=str(folder))
    if not verify:
        return {**row, "detail": f"in {folder}: {', '.join(p.name for p in paths)}; md5 not checked"}
    checks = [_verify(f, p) for f, p in zip(info.files, paths)]
    verdicts = [verdict for verdict, _ in checks]
    if all(verdict is True for verdict in verdicts):
        sources = " and ".join(sorted({note for _, note in checks}))
        what = f"{paths[0].name}: md5 matches" if len(paths) == 1 else f"{len(paths)} files: every md5 matches"
        return {**row, "verified": True, "detail": f"in {folder}, {what} the {sources}"}
    problems = "; ".join(note for verdict, note in checks if verdict is not True)
    return {**row, "verified": False if False in verdicts else None, "detail": f"in {folder}: {problems}"}


def dataset_status(data_dir: str | Path, verify: bool = True) -> list[dict]:
    """One row per registered dataset, in registry order.

    Keys: name, found (all files present in one folder), path (that folder, or None),
    verified (True: every file matches a known-good md5; False: some file matches none;
    None: not checked, or no md5 known for the form found) and detail (one line: which md5
    matched, what is wrong, or where the files were looked for and how to get them).
    verify=True reads every found file once (about a second for CIFAR-10's 170 MB).
    """
    return [_status(info, Path(data_dir).expanduser(), verify) for info in DATASETS.values()]
