"""Choose the eq. 10 mini-batches per scenario by measurement (journal V-F: "a hyper-parameter
to be tuned according to the local data set size and the type of heterogeneity").

Usage: python3 benchmarks/eq10_batch.py SCENARIO [--seed N] [--init keras|torch]
For each eq. 10 setting (disjoint batches of a fraction of the local set; the reference
code's two overlapping draws of n_i / 2.5) it runs the user-centric set-up only (gradients
at theta^0, eq. 9) and prints: the mean share of each row of W on the device's own true
group (uniform would be 1/groups), on the device itself, and the adjusted Rand index of
k-means on W's rows with k = the true group count. A good setting keeps most mass in the
group (sharp) without collapsing onto the device itself (Local), with ARI near 1.
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.metrics import adjusted_rand_score

from learning.weights import kmeans_rows
from scenarios.execution.build import build_learner, scenario_data
from scenarios.execution.spec import RunSpec, resolve

SETTINGS = [
    {"variance_batch_fraction": 1 / 3},
    {"variance_batch_fraction": 0.4},
    {"variance_batch_fraction": 0.5},
    {"variance_batch_fraction": 0.6},
    {"variance_batch_fraction": 0.75},
    {"variance_batches": "reference", "variance_divisor": 2.5},
]


def measure(scenario_name: str, seed: int, init: str, options: dict) -> tuple[float, float, float]:
    data = scenario_data(scenario_name, seed)
    spec = RunSpec(scenario_name, "user-centric", seed=seed, options={"streams": None, **options}, training={"init": init})
    learner = build_learner(resolve(spec), data)
    everyone = range(learner.num_devices)
    learner.local_update(0, everyone)
    learner.aggregate(0, everyone)
    w, groups = learner.full_weights, data.groups
    same_group = groups[:, None] == groups[None, :]
    in_group = float(np.mean(np.sum(w * same_group, axis=1)))
    own = float(np.mean(np.diag(w)))
    k = len(np.unique(groups))
    labels, _ = kmeans_rows(w, k, seed)
    return in_group, own, float(adjusted_rand_score(groups, labels))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init", default="keras")
    args = parser.parse_args()
    print(f"{args.scenario}, seed {args.seed}, init {args.init}")
    print(f"{'eq. 10 setting':<48} {'in-group':>8} {'own':>6} {'ARI':>6}")
    for options in SETTINGS:
        in_group, own, ari = measure(args.scenario, args.seed, args.init, options)
        label = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in options.items())
        print(f"{label:<48} {in_group:8.3f} {own:6.3f} {ari:6.2f}", flush=True)


if __name__ == "__main__":
    main()
