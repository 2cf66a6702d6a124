"""The multicast weakest-member penalty over time as the groups move: a user-centric stream is
sent at the rate of its weakest listener not in outage (``netsim.transport.physical_timeline``,
``RoundChannel.stream_rate_bps``), so it lasts ``B / min_i r_i`` where each member alone would
need ``B / r_i``; the penalty is the stream's time over the mean member's unicast-equivalent
time, ``(1 / min_i r_i) / mean_i (1 / r_i)`` (>= 1; 1: equal members). Read every ``--step``
seconds of simulated time on the UMa 19-site cell (the downlink rates of that instant:
positions, spatially consistent large-scale parameters, association, fading;
``netsim.dynamics``) at 0, 3 and 30 km/h; the static cell draws its fading afresh each reading
(its large-scale channel frozen). Groups of ``--group`` devices drawn at random once per seed
and kept (user-centric groups form by the devices' data, not their places). Prints the Markdown
table of docs/channel-in-time.md (commit and command) and draws the penalty of a few groups
over time (``--figure``).

Per speed and seed: the penalty's mean, median and 90th percentile over readings and groups;
how often the weakest member is still the weakest 10 s and 60 s later; and the correlation of
the log penalty over those lags (how long a group stays as penalized as it is); and the spread
of the groups' own mean penalties over the run (a static group keeps its penalty, a moving one
tends to everyone's mean); each printed as mean +- sample std [min-max] over the seeds
(``benchmarks.spread``).

Usage: python3 -m benchmarks.multicast_penalty [--devices 40] [--group 5] [--minutes 10] [--step 1] [--seeds 0 1 2 3 4] [--figure docs/img/multicast_penalty.png]
"""

from __future__ import annotations

import argparse
import subprocess

import numpy as np

from benchmarks.spread import spread
from scenarios.definitions.cells import get_cell_system

SYSTEM = "uma-3.5ghz"
SPEEDS_KMH = (0.0, 3.0, 30.0)
LAGS_S = (10.0, 60.0)


def penalties(speed_kmh: float, seed: int, devices: int, group: int, minutes: float, step_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(penalty, weakest member) per reading and group (readings x groups; NaN, -1: every member in outage)."""
    system = get_cell_system(SYSTEM, overrides={"speed_kmh": speed_kmh} if speed_kmh > 0 else None)
    network, channel_rng = system.bind(np.full(devices, 100.0), np.random.SeedSequence(seed))
    groups = np.random.default_rng(seed).permutation(devices)[: devices - devices % group].reshape(-1, group)
    times = np.arange(int(round(60.0 * minutes / step_s)) + 1) * step_s
    penalty = np.full((times.size, groups.shape[0]), np.nan)
    weakest = np.full((times.size, groups.shape[0]), -1)
    for i, t in enumerate(times):
        channel = network.draw_round(channel_rng, float(t))
        with np.errstate(divide="ignore"):  # a device in outage has a rate of 0 (the nr curve): masked
            seconds_per_bit = np.where(channel.downlink_outage, np.nan, 1.0 / channel.downlink_bps)[groups]
        heard = ~np.all(np.isnan(seconds_per_bit), axis=1)
        slowest = np.nanmax(seconds_per_bit[heard], axis=1)
        penalty[i, heard] = slowest / np.nanmean(seconds_per_bit[heard], axis=1)
        weakest[i, heard] = groups[heard, np.nanargmax(seconds_per_bit[heard], axis=1)]
    return penalty, weakest


def persistence(penalty: np.ndarray, weakest: np.ndarray, lag: int) -> tuple[float, float]:
    """(share of readings whose weakest member is the weakest ``lag`` readings later, correlation of the log penalty over that lag)."""
    a, b = weakest[:-lag].ravel(), weakest[lag:].ravel()
    valid = (a >= 0) & (b >= 0)
    same = float(np.mean(a[valid] == b[valid]))
    x, y = np.log(penalty[:-lag].ravel()), np.log(penalty[lag:].ravel())
    ok = np.isfinite(x) & np.isfinite(y)
    return same, float(np.corrcoef(x[ok], y[ok])[0, 1])


def seed_figures(penalty: np.ndarray, weakest: np.ndarray, step_s: float) -> list[float]:
    """One seed's figures, the table's columns in order: the penalty's mean, median and 90th
    percentile over readings and groups; per lag, the share of readings whose weakest member is
    still the weakest and the log penalty's correlation; the 10th and 90th percentile of the
    groups' own mean penalties over the run; the share of readings with no member heard."""
    values = penalty.ravel()
    finite = values[np.isfinite(values)]
    figures = [finite.mean(), np.median(finite), np.percentile(finite, 90)]
    for lag_s in LAGS_S:
        figures += persistence(penalty, weakest, int(round(lag_s / step_s)))
    own = np.nanmean(penalty, axis=0)
    return [float(v) for v in (*figures, np.percentile(own, 10), np.percentile(own, 90), np.mean(~np.isfinite(values)))]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=40)
    parser.add_argument("--group", type=int, default=5)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--step", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--figure", default="docs/img/multicast_penalty.png")
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"`python3 -m benchmarks.multicast_penalty --devices {args.devices} --group {args.group} --minutes {args.minutes:g} "
          f"--step {args.step:g} --seeds {' '.join(map(str, args.seeds))}` (commit {commit})\n")
    lag_heads = " | ".join(f"same weakest {lag:g} s later | log-penalty corr. {lag:g} s" for lag in LAGS_S)
    print(f"Each figure per seed, then mean +- sample std [min-max] over the {len(args.seeds)} seeds.\n")
    print(f"| speed | mean penalty | median | 90th pct | {lag_heads} | groups' own means over the run: 10th pct | 90th pct | no member heard |")
    print("|---|---|---|---|" + "---|---|" * len(LAGS_S) + "---|---|---|")
    series = {}
    for speed in SPEEDS_KMH:
        runs = [penalties(speed, seed, args.devices, args.group, args.minutes, args.step) for seed in args.seeds]
        series[speed] = runs[0][0]
        per_seed = np.array([seed_figures(p, w, args.step) for p, w in runs])  # seeds x figures
        digits = [2, 2, 2] + [2, 2] * len(LAGS_S) + [2, 2, 3]
        print(f"| {speed:g} km/h | " + " | ".join(spread(per_seed[:, j], d) for j, d in enumerate(digits)) + " |")
    if args.figure:
        figure(series, args.step, args.figure)


def figure(series: dict, step_s: float, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    from figures.save import save_figure

    fig, axes = plt.subplots(1, len(series), figsize=(9, 3.2), sharey=True)
    for ax, (speed, penalty) in zip(axes, series.items()):
        minutes = np.arange(penalty.shape[0]) * step_s / 60.0
        for g in range(min(3, penalty.shape[1])):
            ax.plot(minutes, penalty[:, g], lw=0.8, label=f"group {g}")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_title(f"{speed:g} km/h" + (" (static)" if speed == 0 else ""), fontsize=9)
        ax.set_xlabel("simulated time (min)")
    axes[0].set_ylabel("penalty: stream / mean unicast time")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, out)


if __name__ == "__main__":
    main()
