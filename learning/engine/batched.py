"""The batched backend: all the jobs of a round trained together, one ``vmap(grad)`` per step.

Parameters are stacked (jobs x parameters, the rows of ``Theta``); each step gathers every
job's mini-batch from one stacked copy of the data, takes every job's gradient of its own mean
loss with ``torch.func`` (``vmap`` of ``grad`` of ``functional_call``: the per-job losses are
independent, so this is the gradient of their sum, never of one global mean) and applies
functional SGD with momentum or Adam with exactly ``torch.optim``'s update rules.

Exactly the reference loop's work (``Trainer.train``), job by job:

- mini-batch orders: one ``torch.randperm(n, generator)`` per epoch, drawn even when
  ``max_steps`` stops the job early; all orders are drawn up front, job after job in job
  order, so jobs that share a generator consume it as the loop would;
- ragged work: the last mini-batch of an epoch is smaller (padded, its padding masked out of
  the mean); a job with fewer steps stops: jobs run sorted by step count, so at every step
  the jobs still running are a prefix of the chunk and only those rows move (parameters,
  momentum, Adam moments and step count alike);
- hooks: ``proximal * (w - anchor)`` and ``gradient_offset`` added to the gradient where the
  loop adds them, the prototype term added to each job's loss (the embedding read by a hook on
  the engine's own model copy); Adam's state loaded from and kept in
  ``trainer.optimizer_states``;
- jobs that share an optimizer state key run one after another (in waves), as in the loop.

Everything of a step lives on ``trainer.config.device``; each device's data is copied there
once and the stacked data of a chunk is reused while the same jobs' data come back (every
round under full participation). Results come back on the CPU, as the loop's. Jobs run in
chunks bounded by ``BatchedEngine.max_jobs`` and a memory budget.

Evaluation (each model on one device's validation split) and mean-loss gradients (eq. 10)
run through the same ``vmap`` path: ``evaluate_many`` and ``mean_gradients``.

Backend ``compiled`` is the same engine with its training step under ``torch.compile`` (one
graph per chunk size; every step computes the whole chunk and keeps the running jobs' rows,
so ragged jobs do not change shapes); evaluation, gradients and FedProto's prototype term
(a hook's side effect) stay as ``batched``'s.
"""

from __future__ import annotations

import copy
import os
import shutil
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np
import torch
from torch.func import functional_call, grad, vmap

from learning.data import DeviceData
from learning.engine.loop import Backend
from learning.jobs import ADAM_BETAS, ADAM_EPS, AdamState, LocalJob, prototype_terms
from learning.models import output_layer

CPU_MEMORY_BYTES = 1 << 30  # working memory of one chunk on the CPU
GPU_MEMORY_FRACTION = 0.5  # of the free GPU memory when the engine starts
CPU_MAX_JOBS = 64  # jobs per chunk on the CPU (benchmarks/batched_chunks.py: small models gain up to 64, LeNet-5 is flat)


# --- schedules: the loop's mini-batch orders, drawn up front ----------------------------------
def job_steps(job: LocalJob, batch_size: int, default_epochs: int) -> tuple[int, int]:
    """(epochs, steps) of one job as the loop runs it."""
    epochs = default_epochs if job.epochs is None else job.epochs
    total = epochs * -(-job.data.num_train // batch_size)
    return epochs, total if job.max_steps is None else max(0, min(total, job.max_steps))


def draw_schedules(jobs: Sequence[LocalJob], batch_size: int, default_epochs: int) -> list[torch.Tensor]:
    """Each job's mini-batches as a ``(steps, batch_size)`` index matrix, ``-1`` padding the
    last batch of an epoch. One ``randperm`` per epoch, jobs in order, as ``Trainer.train``."""
    schedules = []
    for job in jobs:
        n = job.data.num_train
        epochs, steps = job_steps(job, batch_size, default_epochs)
        per_epoch = -(-n // batch_size)
        padded = torch.full((epochs, per_epoch * batch_size), -1, dtype=torch.long)
        for epoch in range(epochs):
            torch.randperm(n, generator=job.generator, out=padded[epoch, :n])  # drawn even if unused, as the loop
        schedules.append(padded.view(epochs * per_epoch, batch_size)[:steps])
    return schedules


def waves(jobs: Sequence[LocalJob], keyed: bool) -> list[list[int]]:
    """Job indices in waves: a job whose optimizer state key an earlier job also uses runs in a
    later wave, so it starts from the state that job leaves (the loop's order)."""
    if not keyed:
        return [list(range(len(jobs)))]
    seen: dict[Hashable, int] = {}
    out: list[list[int]] = []
    for index, job in enumerate(jobs):
        wave = 0
        if job.state_key is not None:
            wave = seen.get(job.state_key, -1) + 1
            seen[job.state_key] = wave
        while len(out) <= wave:
            out.append([])
        out[wave].append(index)
    return out


# --- the engine -------------------------------------------------------------------------------
@dataclass
class _Pool:
    """Stacked data of some devices on the engine's device: rows ``offsets[k] : offsets[k] + sizes[k]``."""

    sources: tuple
    x: torch.Tensor
    y: torch.Tensor
    offsets: torch.Tensor  # on the engine's device
    sizes: list[int]


class BatchedEngine:
    """The batched training, evaluation and gradients of one ``Trainer``.

    ``max_jobs``: most jobs per chunk (default 64 on the CPU, unbounded on a GPU); chunks are
    also bounded by ``memory_bytes`` (default 1 GiB on the CPU, half the free GPU memory),
    from the model's parameter count and its activations per sample.
    """

    def __init__(self, trainer, max_jobs: int | None = None, memory_bytes: int | None = None, compiled: bool = False):
        self.trainer = trainer
        self.device = torch.device(trainer.config.device)
        self.model = copy.deepcopy(trainer.model, memo={id(trainer): trainer}).to(self.device)  # the trainer itself not copied
        self._embedding: torch.Tensor | None = None  # the output layer's input, while prototype jobs train
        named = list(self.model.named_parameters())
        self.names = [name for name, _ in named]
        self.shapes = [tuple(p.shape) for _, p in named]
        self.numels = [p.numel() for _, p in named]
        self.num_parameters = sum(self.numels)
        if self.device.type == "cuda":  # same seed, same numbers on one GPU: cuDNN's deterministic kernels
            torch.backends.cudnn.deterministic = True
            torch.backends.cudnn.benchmark = False
        if memory_bytes is None:
            if self.device.type == "cuda":
                free, _ = torch.cuda.mem_get_info(self.device)
                memory_bytes = int(GPU_MEMORY_FRACTION * free)
            else:
                memory_bytes = CPU_MEMORY_BYTES
        self.memory_bytes = memory_bytes
        self.max_jobs = max_jobs if max_jobs is not None else (CPU_MAX_JOBS if self.device.type == "cpu" else None)
        self._sample_bytes: int | None = None
        self._copies: dict[int, tuple] = {}  # id(DeviceData) -> its tensors on the device
        self._pools: dict[tuple, _Pool] = {}  # the stacked data of the last call's chunks
        self.compiled = compiled
        self._batched_grad = vmap(grad(self._job_loss))
        self._batched_grad_prototypes = vmap(grad(self._job_loss_prototypes))
        if compiled:  # one graph per chunk shape: every step takes the whole chunk (below)
            self._batched_grad = torch.compile(self._batched_grad, dynamic=False)
        self._batched_forward = vmap(self._forward)

    # --- model as a function of the flat parameters ---------------------------------------------
    def _unflatten(self, flat: torch.Tensor) -> dict[str, torch.Tensor]:
        """Views of a (jobs x parameters) matrix as each parameter, stacked over jobs."""
        params, offset = {}, 0
        for name, shape, numel in zip(self.names, self.shapes, self.numels):
            params[name] = flat[:, offset : offset + numel].view(flat.shape[0], *shape)
            offset += numel
        return params

    def _flatten(self, params: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([params[name].reshape(params[name].shape[0], -1) for name in self.names], dim=1)

    def _forward(self, params, x):
        return functional_call(self.model, params, (x,))

    def _sample_losses(self, outputs, y):
        losses = self.trainer.loss(outputs, y, "none")
        return losses.reshape(losses.shape[0], -1).mean(dim=1) if losses.dim() > 1 else losses

    def _job_loss(self, params, x, y, mask, count):
        """One job's mean loss over its real samples (``mask``; ``count`` of them)."""
        losses = self._sample_losses(self._forward(params, x), y)
        return torch.where(mask, losses, torch.zeros_like(losses)).sum() / count

    def _keep_embedding(self, module, inputs) -> None:
        self._embedding = inputs[0].reshape(inputs[0].shape[0], -1)

    def _job_loss_prototypes(self, params, x, y, mask, count, prototypes, weights):
        """``_job_loss`` plus the job's prototype term over its real samples."""
        losses = self._sample_losses(self._forward(params, x), y)
        term = prototype_terms(self._embedding, y, prototypes, weights)
        self._embedding = None
        return torch.where(mask, losses + term, torch.zeros_like(losses)).sum() / count

    # --- data on the device, stacked ------------------------------------------------------------
    def _copy(self, data: DeviceData) -> tuple:
        """``data``'s tensors on the engine's device, copied once while ``data`` lives."""
        key = id(data)
        if key not in self._copies:
            tensors = tuple(t.to(self.device) for t in (data.x_train, data.y_train, data.x_val, data.y_val))
            self._copies[key] = tensors
            weakref.finalize(data, self._copies.pop, key, None)
        return self._copies[key]

    def _pool(self, sources: Sequence[DeviceData], split: str, cache: dict[tuple, _Pool]) -> tuple[_Pool, list[int]]:
        """The distinct ``sources`` stacked (their ``split``: train or val) and each source's
        position in the pool; reused from the last call when it held the same data objects."""
        distinct: dict[int, int] = {}
        order: list[DeviceData] = []
        positions = []
        for data in sources:
            if id(data) not in distinct:
                distinct[id(data)] = len(order)
                order.append(data)
            positions.append(distinct[id(data)])
        key = (split, tuple(id(d) for d in order))
        pool = self._pools.get(key)
        if pool is None or not all(a is b for a, b in zip(pool.sources, order)):
            part = slice(0, 2) if split == "train" else slice(2, 4)
            tensors = [self._copy(d)[part] for d in order]
            sizes = [int(y.shape[0]) for _, y in tensors]
            offsets = torch.tensor(np.concatenate([[0], np.cumsum(sizes)[:-1]]), dtype=torch.long, device=self.device)
            x = torch.cat([x for x, _ in tensors]) if len(tensors) > 1 else tensors[0][0]
            y = torch.cat([y for _, y in tensors]) if len(tensors) > 1 else tensors[0][1]
            pool = _Pool(tuple(order), x, y, offsets, sizes)
        cache[key] = pool
        return pool, positions

    def _keep_pools(self, split: str, pools: dict[tuple, _Pool]) -> None:
        """Keep this call's stacked data of ``split`` (the last call's of the other split stays)."""
        self._pools = {key: pool for key, pool in self._pools.items() if key[0] != split} | pools

    def _bytes_per_sample(self, x_one: torch.Tensor) -> int:
        """Bytes one sample takes through forward and backward: its input and, three times over,
        every module's output (saved activations, their gradients, slack)."""
        if self._sample_bytes is None:
            total = [0]

            def count(_module, _inputs, out):
                total[0] += out.numel() if isinstance(out, torch.Tensor) else 0

            hooks = [m.register_forward_hook(count) for m in self.model.modules() if not list(m.children())]
            one = x_one[:1] if x_one.shape[0] else torch.zeros(1, *x_one.shape[1:], dtype=x_one.dtype)
            try:
                with torch.no_grad():
                    self.model(one.to(self.device))
            finally:
                for hook in hooks:
                    hook.remove()
            self._sample_bytes = 4 * (one.numel() + 3 * total[0])
        return self._sample_bytes

    def _chunk_jobs(self, samples_per_job: int, x_one: torch.Tensor, states_per_job: int) -> int:
        """Most jobs per chunk under the memory budget and ``max_jobs``."""
        per_job = 4 * states_per_job * self.num_parameters + samples_per_job * self._bytes_per_sample(x_one)
        count = max(1, self.memory_bytes // per_job)
        return int(count if self.max_jobs is None else min(count, self.max_jobs))

    # --- training -----------------------------------------------------------------------------
    def train(self, jobs: Sequence[LocalJob]) -> torch.Tensor:
        cfg = self.trainer.config
        schedules = draw_schedules(jobs, cfg.batch_size, cfg.epochs)  # all orders first, in job order
        adam = cfg.optimizer == "adam"
        result = torch.empty(len(jobs), self.num_parameters, dtype=jobs[0].start.dtype)
        pools: dict[tuple, _Pool] = {}
        sample = jobs[0].data.x_train
        states = 6 + (jobs[0].anchor is not None) + (jobs[0].gradient_offset is not None)
        size = self._chunk_jobs(cfg.batch_size, sample, states)
        for wave in waves(jobs, adam):
            wave = sorted(wave, key=lambda k: -schedules[k].shape[0])  # stable: running jobs form a prefix
            for begin in range(0, len(wave), size):
                chunk = wave[begin : begin + size]
                trained = self._train_chunk([jobs[k] for k in chunk], [schedules[k] for k in chunk], pools)
                result[chunk] = trained.to("cpu", result.dtype)
        self._keep_pools("train", pools)
        return result

    def _train_chunk(self, jobs: list[LocalJob], schedules: list[torch.Tensor], pools: dict) -> torch.Tensor:
        cfg, device = self.trainer.config, self.device
        count, batch = len(jobs), cfg.batch_size
        steps = [s.shape[0] for s in schedules]
        w = torch.stack([job.start for job in jobs]).to(device, copy=True)
        if steps[0] == 0:
            return w
        pool, positions = self._pool([job.data for job in jobs], "train", pools)
        index = torch.full((steps[0], count, batch), -1, dtype=torch.long)
        for j, schedule in enumerate(schedules):
            index[: schedule.shape[0], j] = schedule
        index = index.to(device)
        valid = index >= 0
        rows = torch.where(valid, index, 0) + pool.offsets[torch.tensor(positions, device=device)][None, :, None]
        rows = rows.clamp(max=pool.x.shape[0] - 1)  # padding (and a stopped or empty job's rows): any real row
        counts = valid.sum(dim=2).to(w.dtype)
        running = [sum(1 for s in steps if s > t) for t in range(steps[0])]

        proximal = anchor = offset = prototypes = None
        if any(job.proximal > 0 for job in jobs):
            proximal = torch.tensor([job.proximal for job in jobs], dtype=w.dtype, device=device)[:, None]
            anchor = torch.stack([job.anchor if job.anchor is not None else job.start for job in jobs]).to(device)
        if any(job.gradient_offset is not None for job in jobs):
            offset = torch.stack([job.gradient_offset if job.gradient_offset is not None else torch.zeros_like(job.start)
                                  for job in jobs]).to(device, w.dtype)
        if any(job.prototypes is not None for job in jobs):  # a job without them: zero weights
            shape = next(job.prototypes for job in jobs if job.prototypes is not None).shape
            given = [job.prototypes is not None for job in jobs]
            prototypes = (
                torch.stack([job.prototypes if g else torch.zeros(shape) for job, g in zip(jobs, given)]).to(device, w.dtype),
                torch.stack([job.prototype_weights if g else torch.zeros(shape[0]) for job, g in zip(jobs, given)]).to(device, w.dtype),
            )
        optimizer = _Adam(self.trainer, jobs, steps, w) if cfg.optimizer == "adam" else _SGD(cfg.lr, cfg.momentum, w)

        x_shape, y_shape = pool.x.shape[1:], pool.y.shape[1:]
        if self.compiled:
            counts = counts.clamp(min=1)  # stopped jobs' rows: no samples, a gradient of zero
        with self._embedding_kept(prototypes is not None):
            for t in range(steps[0]):
                k = running[t]
                width = count if self.compiled else k  # compiled: the chunk's fixed shape, only k rows used
                flat_rows = rows[t, :width].reshape(-1)
                x = pool.x[flat_rows].view(width, batch, *x_shape)
                y = pool.y[flat_rows].view(width, batch, *y_shape)
                if prototypes is None:
                    gradient = self._batched_grad(self._unflatten(w[:width]), x, y, valid[t, :width], counts[t, :width])
                else:
                    gradient = self._batched_grad_prototypes(self._unflatten(w[:width]), x, y, valid[t, :width],
                                                             counts[t, :width], prototypes[0][:width], prototypes[1][:width])
                gradient = self._flatten(gradient)[:k]
                if proximal is not None:
                    gradient += proximal[:k] * (w[:k] - anchor[:k])
                if offset is not None:
                    gradient += offset[:k]
                optimizer.step(t, k, w, gradient)
        optimizer.keep(jobs, steps)
        return w

    @contextmanager
    def _embedding_kept(self, wanted: bool):
        """While ``wanted``: the output layer's input of each forward pass in ``_embedding``."""
        hook = output_layer(self.model).register_forward_pre_hook(self._keep_embedding) if wanted else None
        try:
            yield
        finally:
            if hook is not None:
                hook.remove()
            self._embedding = None

    # --- evaluation and gradients ---------------------------------------------------------------
    @torch.no_grad()
    def evaluate(self, models: torch.Tensor, datas: Sequence[DeviceData]) -> tuple[np.ndarray, np.ndarray]:
        """(accuracy, mean loss) of ``models[k]`` on ``datas[k]``'s validation split, as
        ``Trainer.evaluate`` for each pair."""
        count = len(datas)
        accuracy, loss = np.full(count, np.nan), np.full(count, np.nan)
        pools: dict[tuple, _Pool] = {}
        pool, positions = self._pool(datas, "val", pools)
        sizes = np.array([pool.sizes[p] for p in positions])
        keep = np.flatnonzero(sizes > 0)
        if keep.size:
            reach = int(min(self.trainer.eval_batch, sizes.max()))
            size = self._chunk_jobs(reach, pool.x, 1)
            for begin in range(0, keep.size, size):
                chunk = keep[begin : begin + size]
                rows = [positions[k] for k in chunk]
                total_loss, correct = self._evaluate_chunk(models[torch.from_numpy(chunk)], pool, rows, reach)
                loss[chunk] = total_loss / sizes[chunk]
                if self.trainer.task == "classification":
                    accuracy[chunk] = correct / sizes[chunk]
        self._keep_pools("val", pools)
        return accuracy, loss

    def _evaluate_chunk(self, models, pool: _Pool, rows: list[int], reach: int) -> tuple[np.ndarray, np.ndarray]:
        device = self.device
        params = self._unflatten(models.to(device))
        offsets = pool.offsets[torch.tensor(rows, device=device)]
        sizes = torch.tensor([pool.sizes[r] for r in rows], device=device)
        total_loss = torch.zeros(len(rows), dtype=torch.float64, device=device)
        correct = torch.zeros(len(rows), dtype=torch.long, device=device)
        for begin in range(0, int(sizes.max()), reach):
            index = begin + torch.arange(reach, device=device)[None, :]
            valid = index < sizes[:, None]
            flat = (torch.where(valid, index, 0) + offsets[:, None]).reshape(-1)
            x = pool.x[flat].view(len(rows), reach, *pool.x.shape[1:])
            y = pool.y[flat].view(len(rows), reach, *pool.y.shape[1:])
            outputs = self._batched_forward(params, x)
            losses = self._sample_losses(outputs.flatten(0, 1), y.flatten(0, 1)).view(len(rows), reach)
            total_loss += torch.where(valid, losses, torch.zeros_like(losses)).sum(dim=1).double()
            if self.trainer.task == "classification":
                correct += ((outputs.argmax(dim=-1) == y) & valid).sum(dim=1)
        return total_loss.cpu().numpy(), correct.cpu().numpy()

    def mean_gradients(self, params: torch.Tensor, datas: Sequence[DeviceData],
                       batches: Sequence[torch.Tensor | None]) -> torch.Tensor:
        """Row k: the gradient at ``params[k]`` of the mean loss over the training points
        ``batches[k]`` of ``datas[k]`` (None: all of them), as ``Trainer.mean_gradient`` (in
        chunks of ``eval_batch`` samples)."""
        count = len(datas)
        indices = [torch.arange(d.num_train) if b is None else torch.as_tensor(b, dtype=torch.long).reshape(-1)
                   for d, b in zip(datas, batches)]
        longest = max(int(i.shape[0]) for i in indices)
        out = torch.zeros(count, self.num_parameters, dtype=params.dtype)
        if longest == 0:
            return out  # no points: zero gradients, as the loop's
        reach = min(self.trainer.eval_batch, longest)
        pools: dict[tuple, _Pool] = {}
        pool, positions = self._pool(datas, "train", pools)
        size = self._chunk_jobs(reach, pool.x, 4)
        for begin in range(0, count, size):
            chunk = list(range(begin, min(begin + size, count)))
            out[chunk] = self._gradient_chunk(params[chunk], pool, [positions[k] for k in chunk], [indices[k] for k in chunk], reach).cpu()
        self._keep_pools("train", pools)
        return out

    def _gradient_chunk(self, params, pool: _Pool, rows: list[int], indices: list[torch.Tensor], reach: int) -> torch.Tensor:
        device = self.device
        longest = max(int(i.shape[0]) for i in indices)
        padded = torch.full((len(rows), max(longest, 1)), -1, dtype=torch.long)
        for j, index in enumerate(indices):
            padded[j, : index.shape[0]] = index
        padded = padded.to(device)
        offsets = pool.offsets[torch.tensor(rows, device=device)][:, None]
        sizes = torch.tensor([max(1, int(i.shape[0])) for i in indices], device=device)
        w = params.to(device)
        total = torch.zeros_like(w)
        for begin in range(0, longest, reach):
            index = padded[:, begin : begin + reach]
            valid = index >= 0
            if index.shape[1] < reach:  # the last chunk: pad to the chunk width
                valid = torch.nn.functional.pad(valid, (0, reach - index.shape[1]))
                index = torch.nn.functional.pad(index, (0, reach - index.shape[1]), value=-1)
            flat = (torch.where(valid, index, 0) + offsets).reshape(-1).clamp(max=pool.x.shape[0] - 1)  # padding: any real row
            x = pool.x[flat].view(len(rows), reach, *pool.x.shape[1:])
            y = pool.y[flat].view(len(rows), reach, *pool.y.shape[1:])
            total += self._flatten(self._batched_grad(self._unflatten(w), x, y, valid, sizes.to(w.dtype)))
        return total


# --- functional optimizers: torch.optim's rules on (jobs x parameters) ------------------------
class _SGD:
    """``torch.optim.SGD`` (no dampening, no Nesterov): ``buf = momentum buf + g`` (the first
    step ``buf = g``: the buffer starts at 0), ``w -= lr buf``; state afresh every call."""

    def __init__(self, lr: float, momentum: float, w: torch.Tensor):
        self.lr, self.momentum = lr, momentum
        self.buffer = torch.zeros_like(w) if momentum > 0 else None

    def step(self, t: int, k: int, w: torch.Tensor, gradient: torch.Tensor) -> None:
        if self.buffer is None:
            w[:k].add_(gradient, alpha=-self.lr)
            return
        buffer = self.buffer[:k]
        buffer.mul_(self.momentum).add_(gradient)
        w[:k].add_(buffer, alpha=-self.lr)

    def keep(self, jobs, steps) -> None:
        pass


class _Adam:
    """``torch.optim.Adam`` (betas 0.9/0.999, eps 1e-7): ``m = lerp(m, g, 1 - b1)``,
    ``v = b2 v + (1 - b2) g^2``, ``w -= lr / (1 - b1^t) m / (sqrt(v) / sqrt(1 - b2^t) + eps)``,
    each job's moments and step count ``t`` loaded from and kept in the trainer's
    ``optimizer_states`` under its key (the bias corrections in float64, as torch's)."""

    def __init__(self, trainer, jobs: list[LocalJob], steps: list[int], w: torch.Tensor):
        self.trainer = trainer
        self.m = torch.zeros_like(w)
        self.v = torch.zeros_like(w)
        start = np.zeros(len(jobs))
        for j, job in enumerate(jobs):
            state = trainer.optimizer_states.get(job.state_key) if job.state_key is not None else None
            if state is not None:
                self.m[j] = state.exp_avg.to(w.device)
                self.v[j] = state.exp_avg_sq.to(w.device)
                start[j] = state.step
        self.start = start
        lr = trainer.config.lr
        t = start[None, :] + np.arange(1, steps[0] + 1)[:, None]  # (steps, jobs): each job's count at each step
        self.step_size = torch.from_numpy(lr / (1 - ADAM_BETAS[0] ** t)).to(w.device, w.dtype)
        self.correction = torch.from_numpy((1 - ADAM_BETAS[1] ** t) ** 0.5).to(w.device, w.dtype)

    def step(self, t: int, k: int, w: torch.Tensor, gradient: torch.Tensor) -> None:
        m, v = self.m[:k], self.v[:k]
        m.lerp_(gradient, 1 - ADAM_BETAS[0])
        v.mul_(ADAM_BETAS[1]).addcmul_(gradient, gradient, value=1 - ADAM_BETAS[1])
        denominator = (v.sqrt() / self.correction[t, :k, None]).add_(ADAM_EPS)
        w[:k].sub_(self.step_size[t, :k, None] * (m / denominator))

    def keep(self, jobs: list[LocalJob], steps: list[int]) -> None:
        """Each job that took a step keeps its state (a job without steps leaves its own as it was)."""
        for j, job in enumerate(jobs):
            if job.state_key is not None and steps[j] > 0:
                self.trainer.optimizer_states[job.state_key] = AdamState(
                    self.m[j].clone(), self.v[j].clone(), int(self.start[j]) + steps[j])


# --- the backends -----------------------------------------------------------------------------
class BatchedBackend(Backend):
    """Backend ``batched``: training, evaluation and gradients by the trainer's ``BatchedEngine``
    (its device copies and caches), made on first use; ``close`` lets it go."""

    compiled = False

    def __init__(self, trainer):
        super().__init__(trainer)
        self._engine: BatchedEngine | None = None

    @property
    def engine(self) -> BatchedEngine:
        if self._engine is None:
            self._engine = BatchedEngine(self.trainer, compiled=self.compiled)
        return self._engine

    def train(self, jobs: Sequence[LocalJob]) -> torch.Tensor:
        return self.engine.train(jobs)

    def evaluate(self, models: torch.Tensor, datas: Sequence[DeviceData]) -> tuple[np.ndarray, np.ndarray]:
        return self.engine.evaluate(models, datas)

    def gradients(self, params: torch.Tensor, datas: Sequence[DeviceData], batches: Sequence) -> torch.Tensor:
        return self.engine.mean_gradients(params, datas, batches)

    def close(self) -> None:
        self._engine = None


class CompiledBackend(BatchedBackend):
    """Backend ``compiled``: ``batched`` with its training step under ``torch.compile``."""

    compiled = True

    @classmethod
    def unavailable(cls, device: str) -> str | None:
        """On the CPU, torch's inductor builds the step's kernels with a C++ compiler (``CXX``,
        else ``g++``) from one command line, which breaks at a space in the path of its cache
        folder (``TORCHINDUCTOR_CACHE_DIR``, else under the temporary folder) or of torch's own
        (torch 2.13's ``cpp_builder``): said before anything trains, not as a failed build."""
        if device != "cpu":
            return None
        compiler = os.environ.get("CXX", "g++")
        if shutil.which(compiler) is None:
            return f"torch builds its CPU kernels with a C++ compiler and there is no {compiler!r} here (set CXX to one)"
        try:
            from torch._inductor.runtime.cache_dir_utils import cache_dir
        except ImportError:  # another torch: its own error, if any, when it builds
            return None
        for what, path in (("its cache folder", cache_dir()), ("torch's folder", os.path.dirname(torch.__file__))):
            if any(character.isspace() for character in path):
                return (f"torch builds its CPU kernels from a command line that breaks at the space in {what} {path!r} "
                        "(set TORCHINDUCTOR_CACHE_DIR to a folder without one, or choose backend batched)")
        return None
