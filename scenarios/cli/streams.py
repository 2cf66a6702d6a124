"""``fl-cosim streams``: the silhouette curve of a scenario's collaboration vectors and the
stream count Algorithm 2 picks for each lambda (journal IV-C, eq. 12)."""

from __future__ import annotations

from scenarios.cli.common import add_data_dir, add_declared, add_json, add_training, parse_options, seed_range, table, training_overrides

DEFAULT_LAMBDAS = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "streams",
        help="silhouette score per k and the k chosen per lambda",
        description="Run the user-centric set-up (gradients and eq. 10 variances at the initial model, "
        "eq. 9 weights), k-means on the weight rows for every k, and Algorithm 2's choice "
        "k* = argmax_k s_k - lambda k for each lambda. Convention: s_1 = s_m = 0. Over --seeds seeds: the "
        "mean curve with its sample std and min-max over seeds, and k* of the mean curve and of each seed.",
    )
    add_declared(parser, "scenario")
    parser.add_argument("--lambda", dest="lambdas", type=float, nargs="+", default=list(DEFAULT_LAMBDAS), metavar="L",
                        help="one or more lambdas (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="first run seed (default 0)")
    parser.add_argument("--seeds", type=int, default=1, help="number of seeds, --seed onwards (default 1)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="user-centric option, repeatable (e.g. variance_batches=reference)")
    add_training(parser)
    add_data_dir(parser)
    add_json(parser)


def execute(args):
    from learning.weights import choose_stream_count
    from scenarios.datasets import resolve_data_dir
    from scenarios.definitions.registry import get_algorithm, get_scenario
    from scenarios.execution.runner import RunSpec, prepare, resolve
    from scenarios.execution.silhouette import setup_silhouette
    from scenarios.reports.over_seeds import SPREAD, mean_std, pm

    for lam in args.lambdas:
        get_algorithm("user-centric").Options.settings()["lam"].check("--lambda", lam)
    seeds = seed_range(args)
    get_scenario(args.scenario)
    options = {**parse_options(args.option, "--option"), "streams": "auto"}
    data_dir = str(resolve_data_dir(args.data_dir))
    curves = {seed: setup_silhouette(prepare(resolve(RunSpec(args.scenario, "user-centric", seed=seed, options=options,
                                                             training=training_overrides(args))), data_dir))
              for seed in seeds}
    spread = {k: mean_std([c[k] for c in curves.values()]) for k in curves[seeds[0]]}
    silhouette = {k: mean for k, (mean, _) in spread.items()}
    chosen = {repr(lam): choose_stream_count(silhouette, lam) for lam in args.lambdas}
    data_out = {"seeds": seeds, "silhouette": {str(k): s for k, s in silhouette.items()}, "chosen": chosen}
    if len(seeds) == 1:
        curve = table(["k", "silhouette"], [[k, f"{s:+.3f}"] for k, s in silhouette.items()])
        picks = table(["lambda", "k*"], [[lam, k] for lam, k in chosen.items()])
        return data_out, f"{args.scenario}: silhouette of k-means on the eq. 9 weight rows\n{curve}\n\nAlgorithm 2 picks\n{picks}"
    per_seed = {repr(lam): {seed: choose_stream_count(c, lam) for seed, c in curves.items()} for lam in args.lambdas}
    data_out.update(spread=SPREAD, silhouette_std={str(k): std for k, (_, std) in spread.items()},
                    silhouette_seeds={str(seed): {str(k): v for k, v in c.items()} for seed, c in curves.items()},
                    chosen_per_seed={lam: {str(seed): k for seed, k in ks.items()} for lam, ks in per_seed.items()})
    curve = table(["k", f"silhouette, mean ({SPREAD})", "min", "max"],
                  [[k, pm(spread[k], "+.3f"), f"{min(c[k] for c in curves.values()):+.3f}", f"{max(c[k] for c in curves.values()):+.3f}"]
                   for k in silhouette])
    picks = table(["lambda", "k* (mean curve)"] + [f"k* seed {seed}" for seed in seeds],
                  [[lam, k] + list(per_seed[lam].values()) for lam, k in chosen.items()])
    return data_out, (f"{args.scenario}, seeds {seeds[0]}-{seeds[-1]}: silhouette of k-means on the eq. 9 weight rows\n"
                      f"{curve}\n\nAlgorithm 2 picks\n{picks}")
