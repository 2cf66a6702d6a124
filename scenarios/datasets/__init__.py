"""Real dataset readers (numpy only) and the data-directory catalog.

Readers: load_idx_dataset (MNIST, Fashion-MNIST, EMNIST), load_cifar (CIFAR-10/100),
load_stackoverflow (+ build_vocabulary, encode). Catalog: DATASETS, resolve_data_dir,
dataset_status. download_dataset fetches published files. Bad or missing data raises
scenarios.errors.DatasetError with a one-line message.
"""

from scenarios.datasets.catalog import DATASETS, dataset_status, resolve_data_dir
from scenarios.datasets.cifar import load_cifar
from scenarios.datasets.download import download_dataset
from scenarios.datasets.mnist import load_idx_dataset
from scenarios.datasets.stackoverflow import build_vocabulary, encode, load_stackoverflow, tokenize

__all__ = [
    "DATASETS",
    "build_vocabulary",
    "dataset_status",
    "download_dataset",
    "encode",
    "load_cifar",
    "load_idx_dataset",
    "load_stackoverflow",
    "resolve_data_dir",
    "tokenize",
]
