"""Where a LeNet-5 training step's time goes, op by op, and whether its max-pool could be cheaper
with the same numbers (CPU, one torch thread; not a test).

``python3 -m benchmarks.step_profile [--steps 200] [--repeats 7]``

1. ``--steps`` training steps of LeNet-5 on a batch of 64 28x28 images, as the trainer takes
   them (channels-last weights and activations, cross-entropy, backward), under
   ``torch.profiler``: each op's share of the CPU time, largest first.
2. The step's first max-pool (64 x 6 x 28 x 28, channels-last), forward with the argmax
   indices its backward routes the gradient by: torch's kernel against the same rule written
   as elementwise torch ops (each window's first maximum in row-major order, a NaN taking it
   as torch's kernel does), fastest of ``--repeats``; both give the same values and indices.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

from benchmarks.pool_speed import fastest_s
from learning.models import LeNet5
from learning.training import _fast_layout


def pool_by_elementwise_ops(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``F.max_pool2d_with_indices(x, 2)`` for a channels-last ``x`` of even height and width:
    the first maximum of each window in row-major order (a NaN taken over any number, the last
    NaN kept), as torch's CPU kernel picks it, and its index in the input plane."""
    n, c, h, w = x.shape
    quads = x.permute(0, 2, 3, 1).view(n, h // 2, 2, w // 2, 2, c)  # a view of the channels-last memory
    best, pick = quads[:, :, 0, :, 0], torch.zeros((), dtype=torch.long)
    for k, value in ((1, quads[:, :, 0, :, 1]), (2, quads[:, :, 1, :, 0]), (3, quads[:, :, 1, :, 1])):
        take = (value > best) | value.isnan()
        best, pick = torch.where(take, value, best), torch.where(take, k, pick)
    rows = torch.arange(0, h, 2).view(1, -1, 1, 1) * w
    columns = torch.arange(0, w, 2).view(1, 1, -1, 1)
    index = rows + columns + (pick >> 1) * w + (pick & 1)
    return best.permute(0, 3, 1, 2), index.permute(0, 3, 1, 2)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    model = _fast_layout(LeNet5())
    images = torch.rand(64, 1, 28, 28, generator=generator)
    images[:, :, :4] = 0.0  # a digit's blank margin: ties in every window there
    labels = torch.randint(0, 10, (64,), generator=generator)

    def step() -> None:
        model.zero_grad(set_to_none=True)
        F.cross_entropy(model(images), labels).backward()

    for _ in range(20):
        step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        for _ in range(args.steps):
            step()
    events = sorted(profile.key_averages(), key=lambda e: -e.self_cpu_time_total)
    total = sum(e.self_cpu_time_total for e in events)
    print(f"torch {torch.__version__}, 1 thread; LeNet-5 training step, batch 64, 28x28: "
          f"{total / args.steps / 1e3:.2f} ms of CPU a step under the profiler\n")
    print("| op | share of the step's CPU time | ms a step |")
    print("|---|---|---|")
    shown = 0.0
    for event in events[:8]:
        shown += event.self_cpu_time_total
        print(f"| `{event.key}` | {100 * event.self_cpu_time_total / total:.1f}% | {event.self_cpu_time_total / args.steps / 1e3:.3f} |")
    print(f"| the rest | {100 * (total - shown) / total:.1f}% | {(total - shown) / args.steps / 1e3:.3f} |")

    with torch.no_grad():
        pooled = model.features[0](images.contiguous(memory_format=torch.channels_last))
    values, indices = F.max_pool2d_with_indices(pooled, 2)
    ours = pool_by_elementwise_ops(pooled)
    same = torch.equal(values, ours[0]) and torch.equal(indices, ours[1])
    torch_ms = 1e3 * fastest_s(lambda: F.max_pool2d_with_indices(pooled, 2), args.repeats, 50)
    ours_ms = 1e3 * fastest_s(lambda: pool_by_elementwise_ops(pooled), args.repeats, 50)
    print(f"\nthe first max-pool's forward with indices, input {tuple(pooled.shape)} channels-last "
          f"(the same values and indices: {same}):\n")
    print("| forward with argmax indices | ms |")
    print("|---|---|")
    print(f"| torch's kernel (`max_pool2d_with_indices`) | {torch_ms:.3f} |")
    print(f"| the same rule as elementwise torch ops | {ours_ms:.3f} ({ours_ms / torch_ms:.1f}x) |")


if __name__ == "__main__":
    main()
