"""Samples/s of the batched engine against the reference loop, side by side in one run, and
how the engine's speed depends on its chunk size (jobs trained together). Not a test.

Usage: python3 -m benchmarks.batched_chunks [--devices 32] [--samples 300] [--threads 1]
       [--chunks 4,8,16,32] [--device cpu] [--model lenet5]
LeNet-5 on random 1x28x28 data (or small-cnn on 1x8x8), batch 64, one epoch of SGD with
momentum per device; prints samples/s of each and the ratio to the loop.
"""

from __future__ import annotations

import argparse
import time

import torch

from learning.data import DeviceData
from learning.engine.batched import BatchedEngine
from learning.models import build_model
from learning.training import LocalJob, LocalTraining, Trainer

SHAPES = {"lenet5": ((1, 28, 28), {}), "small-cnn": ((1, 8, 8), {}), "mlp": ((1, 8, 8), {"in_features": 64, "num_classes": 10})}


def jobs_for(trainer: Trainer, datas: list[DeviceData], seed: int) -> list[LocalJob]:
    start = torch.zeros(trainer.num_parameters)
    start.normal_(0.0, 0.05, generator=torch.Generator().manual_seed(seed))
    return [LocalJob(start, data, torch.Generator().manual_seed(seed + k)) for k, data in enumerate(datas)]


def samples_per_s(train, trainer: Trainer, datas: list[DeviceData], repeats: int) -> tuple[float, float]:
    """(per wall-clock second, per second of this process's CPU time): on a shared machine the
    second is the fairer one for one thread."""
    train(jobs_for(trainer, datas, 0))  # warm-up: caches, allocator
    wall, cpu = time.perf_counter(), time.process_time()
    for repeat in range(repeats):
        train(jobs_for(trainer, datas, repeat + 1))
    if trainer.config.device.startswith("cuda"):
        torch.cuda.synchronize()
    samples = repeats * sum(d.num_train for d in datas)
    return samples / (time.perf_counter() - wall), samples / (time.process_time() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=32)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--chunks", default="4,8,16,32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--model", default="lenet5", choices=tuple(SHAPES))
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    shape, kwargs = SHAPES[args.model]
    generator = torch.Generator().manual_seed(0)
    datas = [DeviceData(torch.randn(args.samples, *shape, generator=generator), torch.randint(0, 10, (args.samples,), generator=generator),
                        torch.empty(0, *shape), torch.empty(0, dtype=torch.long)) for _ in range(args.devices)]
    model = build_model(args.model, torch.Generator().manual_seed(1), **kwargs)
    loop = Trainer(model, LocalTraining(batch_size=64))
    wall, cpu = samples_per_s(lambda jobs: torch.stack([loop.train(j) for j in jobs]), loop, datas, args.repeats)
    print(f"{args.model}, {args.devices} devices x {args.samples} samples, batch 64, {args.threads} thread(s); "
          "samples/s per wall-clock second and per CPU second of this process")
    print(f"loop (cpu): {wall:,.0f} wall, {cpu:,.0f} cpu")
    batched = Trainer(model, LocalTraining(batch_size=64, backend="batched", device=args.device))
    for chunk in (int(c) for c in args.chunks.split(",")):
        engine = BatchedEngine(batched, max_jobs=chunk)
        speed_wall, speed_cpu = samples_per_s(engine.train, batched, datas, args.repeats)
        print(f"batched ({args.device}), {chunk:>3} jobs per chunk: {speed_wall:,.0f} wall ({speed_wall / wall:.2f}x the loop), "
              f"{speed_cpu:,.0f} cpu ({speed_cpu / cpu:.2f}x)")


if __name__ == "__main__":
    main()
