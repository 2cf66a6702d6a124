"""``MaxPool2x2`` against torch's ``nn.MaxPool2d(2)`` where no gradient flows, side by side.

``python3 -m benchmarks.pool_speed [--repeats 7]`` times, interleaved in one process at one
torch thread, the pool alone on LeNet-5's two pooled shapes (a batch of 64, channels-last as the
trainer keeps it) and a whole LeNet-5 evaluation of 1,000 28x28 images with either pool (the
fastest of ``--repeats``), and checks that the logits are the same, bit for bit.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn

from learning.models import LeNet5
from learning.pooling import MaxPool2x2, with_torch_pools


def fastest_s(call, repeats: int, inner: int) -> float:
    call()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            call()
        best = min(best, (time.perf_counter() - start) / inner)
    return best


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    rows = []
    with torch.no_grad():
        for shape in ((64, 6, 28, 28), (64, 16, 10, 10)):
            x = torch.randn(*shape, generator=generator).contiguous(memory_format=torch.channels_last)
            ours, theirs = MaxPool2x2(), nn.MaxPool2d(2)
            times = [fastest_s(lambda: pool(x), args.repeats, 50) for pool in (theirs, ours)]
            rows.append((f"the pool alone, input {tuple(shape)}", *times))
        fast = LeNet5().to(memory_format=torch.channels_last).eval()
        reference = with_torch_pools(LeNet5()).to(memory_format=torch.channels_last).eval()
        reference.load_state_dict(fast.state_dict())
        images = torch.rand(1000, 1, 28, 28, generator=generator)
        images[:, :, :4] = 0.0  # a digit's blank margin: ties in every window there
        same = torch.equal(fast(images), reference(images))
        times = [fastest_s(lambda: model(images), args.repeats, 3) for model in (reference, fast)]
        rows.append(("LeNet-5 evaluation, 1,000 28x28 images", *times))
    print(f"torch {torch.__version__}, 1 thread; logits the same bit for bit: {same}\n")
    print("| at one torch thread, no gradient | `nn.MaxPool2d(2)` ms | `MaxPool2x2` ms | speed-up |")
    print("|---|---|---|---|")
    for name, theirs_s, ours_s in rows:
        print(f"| {name} | {theirs_s * 1e3:.3f} | {ours_s * 1e3:.3f} | {theirs_s / ours_s:.1f}x |")


if __name__ == "__main__":
    main()
