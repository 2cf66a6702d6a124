"""Backend ``processes``: the reference loop, run by a pool of worker processes.

The pool is started on the first round that needs it, from the fork server
(``learning.worker_start``: never a fork of the learner's process, which may have touched CUDA).
Each worker runs the setup calls (plugins), receives the trainer (its model, settings and loss)
and maps the devices' data, copied once into one shared arena (never sent again), and runs
``Trainer.train`` at one torch thread. A round's jobs are split into chains (jobs that share a
generator or an optimizer state run in order, in one worker) and the chains are balanced over
the workers by work (samples x epochs). A job travels as its start vector (and anchor, gradient
offset, Adam moments) written into the worker's shared-memory arena, its generator's state
(``torch.Generator.get_state()``), a few numbers and its prototypes, if any (small: classes x
embedding); the worker writes the trained vector (and the new moments) back into the arena and
returns the generator's new state, and the parent writes generator and optimizer states back.
So the results are bit for bit those of ``loop`` at one torch thread, whatever the split. A job
whose data is not the learner's (pFedLIA's influence batch) is sent whole. Evaluation of many
models (``Trainer.evaluate_many``) and mean gradients (``Trainer.mean_gradients``: pFedMe's
and Per-FedAvg's steps, the user-centric set-up of eq. 10) are split over the same workers, a
row each (its parameters in the arena, its index batch sent). With one worker
(``set_workers``) or on a machine without ``memfd``, the jobs run in this process: the loop.
(The settings refuse this backend on a GPU: ``LocalTraining``.)

The pool belongs to the trainer's backend (``ProcessesBackend.pool``). Workers end with their
owner (``start.die_with``), at EOF on their pipe, or at a ``stop`` message when the trainer is
closed (``Trainer.close``), its backend collected or the interpreter exits. A pool holds no
state across rounds, so closing it is always safe: the next round starts a fresh one. Workers
see the trainer as it was when they were started.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import pickle
import time
import traceback
import weakref
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from multiprocessing.reduction import recv_handle, send_handle
from typing import Sequence

import numpy as np
import torch

from learning.data import DeviceData
from learning import worker_start as start
from learning.engine.loop import Backend, memory_key, shared_evaluations
from learning.jobs import AdamState, LocalJob

_STOP_WAIT_S = 5.0  # a stopping worker's grace period before SIGKILL (shutdown only, never simulated time)

SUPPORTED = hasattr(os, "memfd_create") and "forkserver" in multiprocessing.get_all_start_methods()  # Linux; elsewhere in-process
_worker_count: int | None = None  # None: the machine's usable cores
_open_pools: "weakref.WeakSet[WorkerPool]" = weakref.WeakSet()  # this process's pools (close_pools)


def usable_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def set_workers(count: int | None) -> None:
    """Worker processes of the ``processes`` backend in this process (None: the default below).
    With 1, jobs run in this process, one after another (the ``loop`` backend's path)."""
    global _worker_count
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValueError(f"workers must be an integer >= 1, got {count!r}")
    _worker_count = count


def worker_count() -> int:
    """``set_workers``'s count; by default the usable cores, but 1 inside a process that
    ``multiprocessing`` started (a worker of a parallel sweep: its siblings use the other cores)."""
    if _worker_count is not None:
        return _worker_count
    return 1 if multiprocessing.parent_process() is not None else usable_cores()


class ProcessesBackend(Backend):
    """Backend ``processes``: the trainer's jobs (and evaluations and gradients) run by its worker pool
    (``pool``: started on the first round that needs it, ``set_workers`` of them); with one
    worker, or where workers are not supported, the loop in this process."""

    def __init__(self, trainer):
        super().__init__(trainer)
        self.pool: WorkerPool | None = None
        self._stop_pool: weakref.finalize | None = None

    def _in_process(self) -> bool:
        return worker_count() == 1 or not SUPPORTED or self.trainer.config.device != "cpu"

    def train(self, jobs: Sequence[LocalJob]) -> torch.Tensor:
        if self._in_process():
            return super().train(jobs)
        try:
            return self._live_pool().train(self.trainer, jobs)
        except WorkerDied:  # nothing was written back: a fresh pool can train the round again, once
            return self._live_pool().train(self.trainer, jobs)

    def evaluate(self, models: torch.Tensor, datas: Sequence[DeviceData]) -> tuple[np.ndarray, np.ndarray]:
        """As the loop's; the learner's data are evaluated by the workers, anything else here."""
        if self._in_process():
            return super().evaluate(models, datas)
        try:
            pairs = self._live_pool().evaluate(self.trainer, models, datas)
        except WorkerDied:
            return super().evaluate(models, datas)
        return np.array([a for a, _ in pairs], dtype=np.float64), np.array([l for _, l in pairs], dtype=np.float64)

    def gradients(self, params: torch.Tensor, datas: Sequence[DeviceData], batches: Sequence) -> torch.Tensor:
        """As the loop's: the rows whose data are the learner's by the workers, any other here."""
        if self._in_process() or len(datas) < 2:
            return super().gradients(params, datas, batches)
        try:
            return self._live_pool().gradients(self.trainer, params, datas, batches)
        except WorkerDied:
            return super().gradients(params, datas, batches)

    def _live_pool(self) -> "WorkerPool":
        """The live pool of ``worker_count()`` workers, started now if there is none."""
        count = worker_count()
        if self.pool is None or self.pool.closed or self.pool.size != count:
            self.close()
            self.pool = WorkerPool(self.trainer, count)
            self._stop_pool = weakref.finalize(self, self.pool.close)  # collected, or the interpreter exits
        return self.pool

    def close(self) -> None:
        """Stop and reap the workers; a later round starts a fresh pool."""
        if self._stop_pool is not None:
            self._stop_pool()
        self.pool = self._stop_pool = None


def close_pools() -> None:
    """Stop every worker pool of this process (each backend starts a fresh one when next used)."""
    for pool in list(_open_pools):
        pool.close()


def job_work(job, config) -> int:
    """Samples a job trains on (samples x epochs, or its step limit times the batch)."""
    epochs = config.epochs if job.epochs is None else job.epochs
    work = epochs * job.data.num_train
    if job.max_steps is not None:
        work = min(work, job.max_steps * config.batch_size)
    return work


def chains(jobs: Sequence) -> list[list[int]]:
    """Job indices grouped so that jobs sharing a generator or an optimizer state key are in one
    chain, each chain in job order (what must run in sequence, in one worker)."""
    parent = list(range(len(jobs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict = {}
    for index, job in enumerate(jobs):
        for key in (("generator", id(job.generator)), ("state", job.state_key)):
            if key[1] is None:
                continue
            if key in first:
                parent[root(index)] = root(first[key])
            else:
                first[key] = index
    grouped: dict[int, list[int]] = {}
    for index in range(len(jobs)):
        grouped.setdefault(root(index), []).append(index)
    return list(grouped.values())


def balance(groups: list[list[int]], work: Sequence[int], bins: int) -> list[list[int]]:
    """Chains over ``bins`` workers, largest first to the least loaded (LPT); each worker's job
    indices in ascending order (which keeps every chain in order)."""
    loads = [0] * bins
    assigned: list[list[int]] = [[] for _ in range(bins)]
    for chain in sorted(groups, key=lambda c: (-sum(work[i] for i in c), c[0])):
        target = min(range(bins), key=lambda b: (loads[b], b))
        loads[target] += sum(work[i] for i in chain)
        assigned[target].extend(chain)
    return [sorted(indices) for indices in assigned]


class WorkerDied(RuntimeError):
    """A worker's pipe closed under it (killed, or its owner ended)."""


class _Arena:
    """Shared memory that the parent and one worker both map: an anonymous memfd, so a larger
    one can be handed to a running worker over its pipe."""

    PAGE = 4096

    def __init__(self, nbytes: int, fd: int | None = None):
        if fd is None:
            nbytes = -(-nbytes // self.PAGE) * self.PAGE
            fd = os.memfd_create("fl-cosim-arena")
            os.ftruncate(fd, nbytes)
        self.nbytes = nbytes
        self.fd = fd
        self.map = mmap.mmap(fd, nbytes)
        self.bytes = torch.frombuffer(self.map, dtype=torch.uint8)

    def view(self, dtype: torch.dtype) -> torch.Tensor:
        return self.bytes.view(dtype)

    def close_fd(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


@dataclass
class _Worker:
    process: multiprocessing.Process
    conn: Connection
    arena: _Arena


class WorkerPool:
    """``size`` worker processes started for this trainer (``learning.worker_start``), each with
    its own arena; the resident data in one shared arena that every worker maps."""

    def __init__(self, trainer, size: int):
        if size < 2:
            raise ValueError(f"a worker pool needs at least 2 workers, got {size}")
        resident = tuple(getattr(trainer, "resident_data", ()))
        self.size = size
        self.resident_index = {id(d): i for i, d in enumerate(resident)}
        self._resident = resident  # keeps the ids valid
        self.dtype = next(trainer.model.parameters()).dtype
        self.closed = False
        self.workers: list[_Worker] = []
        _open_pools.add(self)
        try:
            data, layout = _pack(resident)
            parts = pickle.dumps((type(trainer), trainer.model, trainer.config, trainer.task, trainer.eval_batch,
                                  trainer.noise_variance))
            ctx = start.context()
            for _ in range(size):
                self.workers.append(self._start(ctx, parts, data, layout))
            data.close_fd()
        except BaseException:
            self.close()
            raise

    def _start(self, ctx, parts: bytes, data: "_Arena", layout: list) -> _Worker:
        """A worker: it runs the setup calls, then rebuilds the trainer (its model, settings and
        loss; the loop backend) from ``parts`` and maps the resident data."""
        parent_end, child_end = ctx.Pipe(duplex=True)
        process = ctx.Process(target=_worker_main, args=(child_end, os.getpid(), start.setup_calls()),
                              name="fl-cosim-trainer", daemon=True)
        with start.main_left_out():
            process.start()
        child_end.close()
        arena = _Arena(1 << 20)
        parent_end.send_bytes(parts)  # plain pickle: the model is copied, never shared
        parent_end.send((layout, data.nbytes, arena.nbytes))
        send_handle(parent_end, data.fd, process.pid)
        send_handle(parent_end, arena.fd, process.pid)
        arena.close_fd()
        return _Worker(process, parent_end, arena)

    def train(self, trainer, jobs: Sequence) -> torch.Tensor:
        if self.closed:
            raise RuntimeError("the worker pool is closed")
        if next(trainer.model.parameters()).dtype != self.dtype:
            raise RuntimeError("the model's dtype changed since the workers were started")
        config = trainer.config
        size = trainer.num_parameters
        work = [job_work(job, config) for job in jobs]
        assignment = balance(chains(jobs), work, self.size)
        layouts = []
        try:
            for worker, indices in zip(self.workers, assignment):
                if indices:
                    layouts.append((worker, indices, self._send(worker, trainer, jobs, indices, size)))
            replies = [(worker, indices, layout, self._receive(worker)) for worker, indices, layout in layouts]
        except (EOFError, OSError) as error:
            self.close()
            raise WorkerDied(f"a training worker died ({error.__class__.__name__})") from None
        except BaseException:  # a failed job, or an interrupt: replies may still be on their way
            self.close()
            raise
        trained = torch.empty(len(jobs), size, dtype=self.dtype)
        updates: list[tuple[int, bytes, tuple | None]] = []
        for worker, indices, outputs, reply in replies:
            flat = worker.arena.view(self.dtype)
            for index, out, (generator_state, step) in zip(indices, outputs, reply):
                trained[index] = flat[out : out + size]
                adam = None
                if step is not None:
                    adam = (flat[out + size : out + 2 * size].clone(), flat[out + 2 * size : out + 3 * size].clone(), step)
                updates.append((index, generator_state, adam))
        for index, generator_state, adam in sorted(updates, key=lambda u: u[0]):  # job order: the last write wins
            job = jobs[index]
            job.generator.set_state(torch.from_numpy(np.frombuffer(generator_state, dtype=np.uint8).copy()))
            if adam is not None:
                trainer.optimizer_states[job.state_key] = AdamState(*adam)
        return trained

    def _send(self, worker: _Worker, trainer, jobs: Sequence, indices: list[int], size: int) -> list[int]:
        """Write the jobs' vectors into the worker's arena and send their descriptions; returns
        where each job's outputs will be (trained vector, then Adam's two moments)."""
        adam = trainer.config.optimizer == "adam"
        vectors: list[torch.Tensor] = []
        specs, tokens = [], {}
        generators: set[int] = set()

        def place(vector: torch.Tensor) -> int:
            vectors.append(vector.detach().reshape(-1))
            return (len(vectors) - 1) * size

        for index in indices:
            job = jobs[index]
            spec = {"start": place(job.start), "epochs": job.epochs, "max_steps": job.max_steps, "proximal": job.proximal,
                    "anchor": place(job.anchor) if job.proximal > 0 else None,
                    "offset": place(job.gradient_offset) if job.gradient_offset is not None else None,
                    "generator": id(job.generator), "generator_state": None, "state_key": None, "moments": None,
                    "prototypes": None if job.prototypes is None else (job.prototypes.numpy(), job.prototype_weights.numpy())}
            if spec["generator"] not in generators:  # a chain's first job carries its generator's state
                generators.add(spec["generator"])
                spec["generator_state"] = job.generator.get_state().numpy().tobytes()
            if adam and job.state_key is not None:
                if job.state_key not in tokens:  # a key's first job carries the state kept so far
                    tokens[job.state_key] = len(tokens)
                    state = trainer.optimizer_states.get(job.state_key)
                    if state is not None:
                        spec["moments"] = (place(state.exp_avg), place(state.exp_avg_sq), state.step)
                spec["state_key"] = tokens[job.state_key]
            data_key = self.resident_index.get(id(job.data))
            spec["data"] = data_key if data_key is not None else (job.data.x_train.numpy(), job.data.y_train.numpy())
            specs.append(spec)
        outputs, cursor = [], len(vectors) * size
        for spec in specs:
            outputs.append(cursor)
            cursor += size * (3 if spec["state_key"] is not None else 1)
        self._fit(worker, cursor * self.dtype.itemsize)
        torch.cat(vectors, out=worker.arena.view(self.dtype)[: len(vectors) * size])
        worker.conn.send(("train", specs, outputs, size))
        return outputs

    def evaluate(self, trainer, params: torch.Tensor, data: Sequence[DeviceData]) -> list[tuple[float, float]]:
        if self.closed:
            raise RuntimeError("the worker pool is closed")
        results: list = [None] * len(data)
        resident = [i for i, d in enumerate(data) if id(d) in self.resident_index]
        # pairs that share a forward pass (one input tensor, equal models) go to one worker, whose work is that pass
        groups = shared_evaluations([params[i] for i in resident], [data[i] for i in resident])
        work = [0] * len(resident)
        for group in groups:
            work[group[0]] = int(data[resident[group[0]]].y_val.shape[0])
        assignment = [[resident[p] for p in positions] for positions in balance(groups, work, self.size)]

        def here() -> None:  # meanwhile, what the workers do not hold
            for i in sorted(set(range(len(data))) - set(resident)):
                results[i] = trainer.evaluate(params[i], data[i].x_val, data[i].y_val)

        replies = self._on_workers("evaluate", trainer, params, assignment, lambda i: (self.resident_index[id(data[i])],), here)
        for _, indices, reply, _ in replies:
            for i, result in zip(indices, reply):
                results[i] = result
        return results

    def gradients(self, trainer, params: torch.Tensor, datas: Sequence[DeviceData], batches: Sequence) -> torch.Tensor:
        """Row k: ``Trainer.mean_gradient`` at ``params[k]`` on the points ``batches[k]`` (None:
        all) of ``datas[k]``, the rows balanced over the workers by their points."""
        if self.closed:
            raise RuntimeError("the worker pool is closed")
        out = torch.empty(len(datas), trainer.num_parameters, dtype=self.dtype)
        indices = [None if b is None else torch.as_tensor(b).numpy() for b in batches]
        resident = [k for k, d in enumerate(datas) if id(d) in self.resident_index]
        work = [int(datas[k].num_train if indices[k] is None else indices[k].size) for k in resident]
        assignment = [[resident[p] for p in positions] for positions in balance([[p] for p in range(len(resident))], work, self.size)]

        def here() -> None:  # meanwhile, what the workers do not hold
            others = sorted(set(range(len(datas))) - set(resident))
            if others:
                out[others] = Backend(trainer).gradients(params[others], [datas[k] for k in others], [batches[k] for k in others])

        replies = self._on_workers("gradients", trainer, params, assignment,
                                   lambda k: (self.resident_index[id(datas[k])], indices[k]), here, outputs=True)
        for worker, rows, _, at in replies:  # each worker wrote its rows' gradients from ``at``
            out[rows] = worker.arena.view(self.dtype)[at : at + len(rows) * out.shape[1]].view(len(rows), -1)
        return out

    def _on_workers(self, kind: str, trainer, params, assignment: list[list[int]], spec, here, outputs: bool = False) -> list:
        """Send each worker its rows' parameter vectors in its arena, each distinct one once (the
        rows of an expanded tensor, as the eq. 10 set-up's ``theta^0``, are one), and ``(kind,
        [(offset, *spec(row)) per row], size, results_at)``; with ``outputs``, room from
        ``results_at`` for a vector per row, which the worker fills; run ``here()`` meanwhile;
        return each (worker, rows, reply, results_at)."""
        size = trainer.num_parameters
        sent = []
        try:
            for worker, rows in zip(self.workers, assignment):
                if not rows:
                    continue
                places: dict[tuple, int] = {}
                vectors, offsets = [], []
                for k in rows:
                    key = memory_key(params[k])
                    if key not in places:
                        places[key] = len(vectors) * size
                        vectors.append(params[k].reshape(-1))
                    offsets.append(places[key])
                results_at = len(vectors) * size
                self._fit(worker, (results_at + (len(rows) * size if outputs else 0)) * self.dtype.itemsize)
                torch.cat(vectors, out=worker.arena.view(self.dtype)[:results_at])
                worker.conn.send((kind, [(at, *spec(k)) for at, k in zip(offsets, rows)], size, results_at))
                sent.append((worker, rows, results_at))
            here()
            return [(worker, rows, self._receive(worker), results_at) for worker, rows, results_at in sent]
        except (EOFError, OSError) as error:
            self.close()
            raise WorkerDied(f"a training worker died ({error.__class__.__name__})") from None
        except BaseException:
            self.close()
            raise

    def _fit(self, worker: _Worker, nbytes: int) -> None:
        """Grow the worker's arena to hold ``nbytes`` (a new memfd, handed over the pipe)."""
        if nbytes <= worker.arena.nbytes:
            return
        arena = _Arena(max(nbytes + nbytes // 4, 2 * worker.arena.nbytes))
        worker.conn.send(("arena", arena.nbytes))
        send_handle(worker.conn, arena.fd, worker.process.pid)
        arena.close_fd()
        worker.arena = arena

    def _receive(self, worker: _Worker) -> list:
        kind, payload = worker.conn.recv()
        if kind == "error":
            raise RuntimeError(f"training worker {worker.process.pid} failed:\n{payload}")
        return payload

    def close(self) -> None:
        """Stop the workers (a stop message, then SIGKILL after a grace period) and reap them."""
        if self.closed:
            return
        self.closed = True
        _open_pools.discard(self)
        for worker in self.workers:
            try:
                worker.conn.send(("stop",))
            except OSError:
                pass
        deadline = time.monotonic() + _STOP_WAIT_S
        for worker in self.workers:
            if not _exited(worker.conn, deadline):
                worker.process.kill()
            worker.conn.close()
            worker.process.join()  # reaped: it leaves no zombie

    @property
    def pids(self) -> list[int]:
        return [w.process.pid for w in self.workers]


def _exited(conn: Connection, deadline: float) -> bool:
    """Whether the worker at the other end of ``conn`` closed it (exited) by ``deadline``:
    replies still on their way are read and dropped; the wait blocks in ``poll``."""
    try:
        while conn.poll(max(0.0, deadline - time.monotonic())):
            conn.recv_bytes()
    except (EOFError, OSError):
        return True
    return False


def _pack(resident: Sequence[DeviceData]) -> tuple[_Arena, list]:
    """The resident data copied into one shared arena; ``layout``: per device, each of its four
    tensors' (offset, dtype, shape). A tensor several devices hold (the concept-shift scenarios'
    shared validation images) is copied once, so in the workers too it is one tensor's memory
    and its evaluations share a forward pass (``shared_evaluations``)."""
    tensors = [t.detach().contiguous() for d in resident for t in (d.x_train, d.y_train, d.x_val, d.y_val)]
    offsets, cursor, placed = [], 0, {}
    for t in tensors:
        key = memory_key(t)
        if key not in placed:
            cursor = -(-cursor // 64) * 64
            placed[key] = (cursor, t)
            cursor += t.numel() * t.element_size()
        offsets.append(placed[key][0])
    arena = _Arena(max(cursor, 1))
    for at, t in placed.values():
        arena.bytes[at : at + t.numel() * t.element_size()] = t.reshape(-1).view(torch.uint8)
    specs = [(at, str(t.dtype).removeprefix("torch."), tuple(t.shape)) for t, at in zip(tensors, offsets)]
    return arena, [specs[k : k + 4] for k in range(0, len(specs), 4)]


def _unpack(arena: _Arena, layout: list) -> tuple[DeviceData, ...]:
    def tensor(at: int, dtype: str, shape: tuple) -> torch.Tensor:
        kind = getattr(torch, dtype)
        size = int(np.prod(shape, dtype=np.int64)) * torch.empty(0, dtype=kind).element_size()
        return arena.bytes[at : at + size].view(kind).reshape(shape)

    return tuple(DeviceData(*(tensor(*spec) for spec in device)) for device in layout)


def _worker_main(conn: Connection, owner_pid: int, setup: tuple) -> None:
    """A training worker: begin (``start.begin_worker``: the plugins' setup first), receive the
    trainer and the data, then serve."""
    code = 1
    try:
        start.begin_worker(owner_pid, setup)
        trainer_class, model, config, task, eval_batch, noise_variance = pickle.loads(conn.recv_bytes())
        trainer = trainer_class(model, replace(config, backend="loop"), task, eval_batch, noise_variance)
        layout, data_bytes, arena_bytes = conn.recv()
        data = _Arena(data_bytes, recv_handle(conn))
        arena = _Arena(arena_bytes, recv_handle(conn))
        data.close_fd()
        arena.close_fd()
        _serve(conn, trainer, _unpack(data, layout), arena, next(model.parameters()).dtype)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


def _serve(conn: Connection, trainer, resident: tuple, arena: _Arena, dtype: torch.dtype) -> None:
    """A worker's loop: train what it is sent until told to stop or its parent is gone."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        kind = message[0]
        if kind == "stop":
            return
        if kind == "arena":
            arena = _Arena(message[1], recv_handle(conn))
            arena.close_fd()
            continue
        try:
            if kind == "evaluate":
                flat, (specs, size, _) = arena.view(dtype), message[1:]
                accuracy, loss = Backend(trainer).evaluate([flat[at : at + size] for at, _ in specs], [resident[key] for _, key in specs])
                reply = list(zip(accuracy.tolist(), loss.tolist()))  # the loop's: shared inputs and equal models, one forward pass
            elif kind == "gradients":
                flat, (specs, size, results_at) = arena.view(dtype), message[1:]
                gradients = Backend(trainer).gradients([flat[at : at + size] for at, _, _ in specs],
                                                       [resident[key] for _, key, _ in specs],
                                                       [None if b is None else torch.from_numpy(b) for _, _, b in specs])
                flat[results_at : results_at + len(specs) * size] = gradients.reshape(-1)  # the loop's rows, in the order sent
                reply = len(specs)
            else:
                reply = _train(trainer, resident, arena.view(dtype), *message[1:])
        except Exception:
            conn.send(("error", traceback.format_exc()))
        else:
            conn.send(("done", reply))


def _train(trainer, resident: tuple, flat: torch.Tensor, specs: list[dict], outputs: list[int], size: int) -> list:
    """Run the jobs in order with ``Trainer.train`` (the reference); write each trained vector
    (and Adam moments) at its output offset; return each job's generator state and Adam step."""
    trainer.optimizer_states = {}
    generators: dict[int, torch.Generator] = {}
    reply = []

    def vector(at: int | None) -> torch.Tensor | None:
        return None if at is None else flat[at : at + size]

    for spec, out in zip(specs, outputs):
        generator = generators.get(spec["generator"])
        if generator is None:
            generator = torch.Generator()
            generator.set_state(torch.from_numpy(np.frombuffer(spec["generator_state"], dtype=np.uint8).copy()))
            generators[spec["generator"]] = generator
        key = spec["state_key"]
        if spec.get("moments") is not None:
            first, second, step = spec["moments"]
            trainer.optimizer_states[key] = AdamState(vector(first).clone(), vector(second).clone(), step)
        data = spec["data"]
        if not isinstance(data, int):
            x, y = torch.from_numpy(data[0]), torch.from_numpy(data[1])
            data = DeviceData(x, y, x[:0], y[:0])
        else:
            data = resident[data]
        prototypes, weights = (torch.from_numpy(a) for a in spec["prototypes"]) if spec["prototypes"] else (None, None)
        trained = trainer.train(LocalJob(vector(spec["start"]), data, generator, key, epochs=spec["epochs"],
                                         max_steps=spec["max_steps"], anchor=vector(spec["anchor"]), proximal=spec["proximal"],
                                         gradient_offset=vector(spec["offset"]), prototypes=prototypes,
                                         prototype_weights=weights))
        flat[out : out + size] = trained
        step = None
        state = trainer.optimizer_states.get(key) if key is not None else None
        if state is not None:
            flat[out + size : out + 2 * size] = state.exp_avg
            flat[out + 2 * size : out + 3 * size] = state.exp_avg_sq
            step = state.step
        reply.append((generator.get_state().numpy().tobytes(), step))
    return reply
