"""A silhouette curve (journal IV-C) on the native libraries' default threads and on one.

``python3 -m benchmarks.clustering_threads [--devices 100] [--repeats 3]`` builds a
collaboration matrix W of ``--devices`` rows in four groups (eq. 9's shape: rows summing to 1,
heavier within a group), then times ``learning.weights.silhouette_curve`` side by side: with
the BLAS and OpenMP threads this machine gives by default, and within
``learning.single_thread.one_thread`` (what the project does). It prints both times, their
ratio, whether the k-means labels agree for every k and the largest difference between the
two curves' scores.
"""

from __future__ import annotations

import argparse
import time
from contextlib import nullcontext
from unittest import mock

import numpy as np

from learning import weights
from learning.single_thread import native_threads


def collaboration_matrix(devices: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    groups = np.arange(devices) % 4
    w = rng.random((devices, devices)) * np.where(groups[:, None] == groups[None, :], 5.0, 1.0)
    return w / w.sum(axis=1, keepdims=True)


def curve(w: np.ndarray, threads_default: bool) -> tuple[float, dict, list]:
    """(seconds, k -> s_k, labels per k) with the default threads or one."""
    labels = []
    kmeans_rows = weights.kmeans_rows

    def kept(*args):
        result = kmeans_rows(*args)
        labels.append(result[0])
        return result

    context = mock.patch.object(weights, "one_thread", nullcontext) if threads_default else nullcontext()
    with context, mock.patch.object(weights, "kmeans_rows", kept):
        began = time.perf_counter()
        scores = weights.silhouette_curve(w, seed=1)
        return time.perf_counter() - began, scores, labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    w = collaboration_matrix(args.devices)
    threads = {i["internal_api"]: i["num_threads"] for i in native_threads().info()}
    print(f"silhouette curve of {args.devices} devices; default threads {threads}")
    best = {True: float("inf"), False: float("inf")}
    for _ in range(args.repeats):
        for default in (True, False):
            seconds, scores, labels = curve(w, default)
            best[default] = min(best[default], seconds)
            if default:
                default_scores, default_labels = scores, labels
            else:
                one_scores, one_labels = scores, labels
    same = all(np.array_equal(a, b) for a, b in zip(default_labels, one_labels))
    gap = max(abs(default_scores[k] - one_scores[k]) for k in default_scores)
    print(f"default threads {best[True]:.2f} s, one thread {best[False]:.2f} s: {best[True] / best[False]:.2f}x "
          f"(best of {args.repeats})")
    print(f"k-means labels equal for every k: {same}; largest score difference {gap:.3g}")


if __name__ == "__main__":
    main()
