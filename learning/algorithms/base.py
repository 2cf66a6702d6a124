"""The state every algorithm shares, and the weight-matrix family (FedAvg, Local, Oracle,
user-centric): a variant overrides only what differs.

The round loop is not here: it is in ``netsim``; these classes only answer its calls.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
import torch

from contract import RoundPlan, Stream
from contract.seeds import LearnerSeeds
from learning.codecs import Codec, Identity
from learning.coded_links import CodedLinks
from learning.data import FederatedData
from learning.evaluation import Evaluation, Reach
from learning.models import build_model
from learning.options import Options
from learning.params import get_flat, model_bits
from learning.training import LocalJob, LocalTraining, Trainer, torch_generator
from learning.weights import mix

SCALAR_BITS = 32.0


@dataclass(frozen=True)
class LearnerSetup:
    """What every algorithm is built from: the data, the model, local training, randomness."""

    data: FederatedData
    model_name: str
    model_kwargs: dict
    training: LocalTraining
    seed_sequence: np.random.SeedSequence
    participation: float = 1.0  # fraction of devices sampled per round
    options: Mapping | Options = field(default_factory=dict)  # the algorithm's Options, or a mapping checked into them
    # on a physical cell, the base station's estimate of a multicast's downlink seconds per bit
    # for a group of devices (from channel reports); None on a normalized system
    multicast_airtime: Callable[[Sequence[int]], float] | None = None
    uplink_codec: Codec = field(default_factory=Identity)  # the uplink updates' codec (learning.codecs.parse_codec)
    downlink_codec: Codec = field(default_factory=Identity)  # and the downlink models'
    unreached: str = "held"  # how a device its model did not reach is scored: held or excluded (learning.evaluation)

    @property
    def coded(self) -> bool:
        """Whether either link has a codec other than ``none``."""
        return not (self.uplink_codec.is_identity and self.downlink_codec.is_identity)


def summary(cls: type) -> str:
    """The first sentence of the algorithm module's docstring: what it is, with its paper."""
    import sys

    return first_sentence(sys.modules[cls.__module__].__doc__ or cls.__doc__ or cls.name)


def first_sentence(doc: str) -> str:
    """The first sentence of ``doc``'s first paragraph (an "et al." does not end it)."""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    return re.split(r"(?<!\bal)\.\s+(?=[A-Z])", paragraph)[0].rstrip(".") + "."


class FederatedLearner:
    """Common state: one reusable model object, ``theta`` (devices x parameters), one torch
    generator per device, a numpy generator for server-side choices.

    Subclasses implement ``plan_round``, ``local_update``, ``aggregate``; evaluation of each
    device's ``personal_model`` on its own validation split is shared, and so is what a device
    holds when a model sent to it did not reach it (``hold``, ``learning.evaluation.Reach``).
    """

    name = "base"
    Options: type[Options] = Options  # each algorithm with options declares its own dataclass
    # True where the class sends the plain model difference up and the model down through
    # MixingLearner's plan and local update, so the run's codecs (learning.codecs) apply; read
    # from the class itself, never inherited (``takes_codecs``): a subclass that sends payloads
    # of its own (control variates, a proximal update...) is never coded by mistake
    accepts_codecs = False

    def __init__(self, setup: LearnerSetup):
        self.setup = setup
        given = setup.options
        self.options = given if type(given) is self.Options else self.Options.resolve(given, owner=self.name)
        self.data = setup.data
        self.num_devices = setup.data.num_devices
        self.seeds = LearnerSeeds.of(setup.seed_sequence)
        model = build_model(setup.model_name, torch_generator(self.seeds.init), setup.training.init, **setup.model_kwargs)
        self.trainer = Trainer(model, setup.training, setup.data.task, noise_variance=setup.data.noise_variance)
        self.trainer.resident_data = setup.data.devices
        self.model_bits = model_bits(model)
        self.theta0 = get_flat(model)
        self.theta = self.theta0.repeat(self.num_devices, 1)
        self.generators = [torch_generator(self.seeds.device(d)) for d in range(self.num_devices)]
        self.rng = np.random.default_rng(self.seeds.server)
        self.train_sizes = setup.data.train_sizes
        if not 0 < setup.participation <= 1:
            raise ValueError(f"participation must be in (0, 1], got {setup.participation}")
        if setup.coded and not self.takes_codecs():
            raise ValueError(f"codecs apply to {', '.join(codec_algorithms())}; {self.name} sends its own payloads")
        self.scheduled: tuple[int, ...] | None = None  # the network's choice for the coming round
        self.reach = Reach(self.theta0, self.num_devices, setup.unreached)

    @classmethod
    def update_work(cls, options: Options, training, standard_steps: int) -> float:
        """Standard local updates (the scenario's E epochs: ``standard_steps`` mini-batch steps)
        that one participant computes in a round: the compute time the clock charges
        (``scale_by_work``) and the work ``auto`` sizes a run by (``learning.engine.auto``).
        Where it changes from round to round, the most; where only the data tell (the streams
        parallel user-centric FL trains, found by its set-up), one."""
        return 1.0

    @classmethod
    def setup_epochs(cls, options: Options) -> float:
        """Gradient passes (forward and backward, no step) over every device's training data
        before the first round, at most: none."""
        return 0.0

    @classmethod
    def takes_codecs(cls) -> bool:
        """Whether the class itself declares ``accepts_codecs`` (a subclass says it again)."""
        return bool(vars(cls).get("accepts_codecs", False))

    # --- shared helpers -------------------------------------------------------------
    def job(self, device: int, start: torch.Tensor, slot: str = "model", **hooks) -> LocalJob:
        """``device``'s local update from ``start`` on its own data and generator; ``slot`` names
        the model it trains, so each (slot, device) keeps its own optimizer state (Adam)."""
        return LocalJob(start, self.data.devices[device], self.generators[device], (slot, device), **hooks)

    def schedule(self, server_round: int, devices) -> None:
        """The network scheduled ``devices`` for ``server_round``: they are its participants."""
        self.scheduled = tuple(sorted(int(d) for d in devices))

    def sample_participants(self) -> tuple[int, ...]:
        """The devices the network scheduled; else all devices, or a uniform sample of
        ``participation * m`` of them (at least one)."""
        if self.scheduled is not None:
            chosen, self.scheduled = self.scheduled, None
            return chosen
        m = self.num_devices
        if self.setup.participation >= 1:
            return tuple(range(m))
        count = max(1, int(round(self.setup.participation * m)))
        return tuple(sorted(int(d) for d in self.rng.choice(m, size=count, replace=False)))

    def model_uplink(self, participants: Sequence[int], models_each: float = 1.0) -> dict[int, float]:
        return {d: models_each * self.model_bits for d in participants}

    def standard_steps(self, device: int) -> int:
        """Mini-batch steps of one standard local update (the scenario's E epochs): the unit in
        which a device's compute time ``T_min + Exp(mu)`` is counted."""
        return self.setup.training.epochs * self.trainer.steps_per_epoch(self.data.devices[device])

    def scale_by_work(self, plan: RoundPlan | None) -> RoundPlan | None:
        """``plan`` with each participant computing the class's ``update_work``."""
        return self.scale_compute(plan, lambda d: self.update_work(self.options, self.setup.training, self.standard_steps(d)))

    def scale_compute(self, plan: RoundPlan | None, factor: float | Callable[[int], float]) -> RoundPlan | None:
        """``plan`` with each participant computing ``factor`` standard local updates (a number,
        or a function of the device), so heavier local work takes longer on the clock."""
        if plan is None:
            return None
        scale = {d: float(factor(d) if callable(factor) else factor) for d in plan.participants}
        if all(value == 1.0 for value in scale.values()):
            return plan
        return dataclasses.replace(plan, compute_scale=scale)

    def personal_model(self, device: int) -> torch.Tensor:
        """The model evaluated for ``device`` (its row of ``theta`` unless the algorithm says otherwise)."""
        return self.theta[device]

    def personal_models(self, devices: Sequence[int]) -> list[torch.Tensor]:
        """``personal_model`` of each of ``devices`` (an algorithm that computes them may do it at once)."""
        return [self.personal_model(device) for device in devices]

    def cluster_labels(self) -> np.ndarray | None:
        """The device clustering the algorithm found, if it clusters (None otherwise)."""
        return None

    def evaluation_extras(self) -> dict:
        """Algorithm-level metrics: ``clustering_ari`` against the true groups for clustering
        algorithms, ``estimation_error`` where the scenario knows the true parameters."""
        extras = {}
        labels = self.cluster_labels()
        if labels is not None and self.data.groups is not None:
            from sklearn.metrics import adjusted_rand_score

            extras["clustering_ari"] = float(adjusted_rand_score(self.data.groups, labels))
        truth = self.data.info.get("true_parameters")
        if truth is not None:
            estimates = torch.stack([self.personal_model(d) for d in range(self.num_devices)]).numpy()
            extras["estimation_error"] = float(np.mean(np.sum((estimates - np.asarray(truth).reshape(estimates.shape)) ** 2, axis=1)))
        return extras

    def hold(self, received: Sequence[int], missed: Sequence[int]) -> None:
        """The orchestrator's report of who a model reached: each of ``received`` now holds its
        ``personal_model`` (called after its local update and before the aggregation, which it
        hears of only with the next model it receives); to each of ``missed`` a model was sent
        that did not arrive, so until it receives one it is scored on what it holds
        (``learning.evaluation``)."""
        self.reach.missed(missed)
        self.reach.received(received, self.personal_models)

    def evaluate(self, server_round: int) -> Evaluation:
        """Every device on its own validation split with ``personal_model``; a device its model
        did not reach with the model it holds, or left out (``LearnerSetup.unreached``)."""
        reach = self.reach
        excluded = tuple(reach.unreached_devices) if reach.unreached == "excluded" else ()
        scored = [d for d in range(self.num_devices) if d not in excluded]
        models = [self.personal_model(d) if reach.reached[d] else reach.holds(d) for d in scored]
        if not excluded:
            accuracy, loss = self.trainer.evaluate_many(torch.stack(models), self.data.devices)
            return Evaluation(accuracy, loss, self.evaluation_extras())
        accuracy, loss = np.full(self.num_devices, np.nan), np.full(self.num_devices, np.nan)
        if scored:
            accuracy[scored], loss[scored] = self.trainer.evaluate_many(torch.stack(models), [self.data.devices[d] for d in scored])
        return Evaluation(accuracy, loss, self.evaluation_extras(), excluded=excluded)


def codec_algorithms() -> list[str]:
    """The algorithms that take update codecs (their class declares ``accepts_codecs``), sorted."""
    found, classes = set(), [FederatedLearner]
    while classes:
        cls = classes.pop()
        classes += cls.__subclasses__()
        if cls.takes_codecs():
            found.add(cls.name)
    return sorted(found)


class MixingLearner(FederatedLearner):
    """Local SGD from each device's current model, then ``Theta <- W @ Theta`` (journal eq. 8).

    The downlink follows from W: devices whose mixed rows are identical hold the same model and
    share one multicast stream; a device that already holds its model (its own update, or a
    model unchanged since it last received it) needs no stream.
    """

    name = "mixing"
    communicates = True

    def __init__(self, setup: LearnerSetup):
        super().__init__(setup)
        self.theta_half = self.theta.clone()
        self.needs_model = set(range(self.num_devices)) if self.communicates else set()
        self.streamed: set[int] = set()  # devices sent their model this round
        self.model_key: list = [("init",)] * self.num_devices
        self.links: CodedLinks | None = None
        self.held: torch.Tensor | None = None  # with a downlink codec: the model each device trains from
        if setup.coded:
            self.links = CodedLinks(setup.uplink_codec, setup.downlink_codec, self.seeds, self.theta)
            if not self.links.downlink.is_identity:
                self.held = self.theta.clone()

    def mixing_matrix(self) -> np.ndarray:
        raise NotImplementedError

    def plan_round(self, server_round: int) -> RoundPlan | None:
        if server_round == 0:
            return None
        participants = self.sample_participants()
        uplink = self.model_uplink(participants) if self.communicates else {}
        if self.links is not None:
            uplink = {d: self.links.uplink_bits(self.model_bits) for d in uplink}
        return RoundPlan(self.model_streams(participants), uplink, participants)

    def model_streams(self, participants: Sequence[int], bits: float | None = None) -> tuple[Stream, ...]:
        """One stream per distinct model among the participants that need theirs."""
        groups: dict = {}
        for device in participants:
            if device in self.needs_model:
                key = self.model_key[device] if self.links is None else (self.model_key[device], self.links.stream_key(device))
                groups.setdefault(key, []).append(device)
        payload = self.model_bits if bits is None else bits
        if self.links is None:
            streams = tuple(Stream(tuple(devices), payload) for devices in groups.values())
        else:
            streams = tuple(Stream(tuple(devices), self.links.send_model(devices, self.theta[devices[0]], payload))
                            for devices in groups.values())
        self.streamed = {device for devices in groups.values() for device in devices}
        self.needs_model.difference_update(participants)
        return streams

    def round_outcome(self, server_round: int, outcome) -> None:
        """A device that missed the stream sent to it (downlink outage) still needs its model."""
        self.needs_model.update(self.streamed.difference(outcome.received))
        self.streamed = set()
        if self.links is not None:
            for device in self.links.delivered(outcome.received):
                self.held[device] = self.links.reference[device]

    def start_model(self, device: int) -> torch.Tensor:
        """The model ``device`` trains from: its row of ``theta``, or what it decoded."""
        return self.theta[device] if self.held is None else self.held[device]

    def local_job(self, device: int, start: torch.Tensor) -> LocalJob:
        """``device``'s local update from the model ``start`` it received, as a training request
        (``learning.jobs.LocalJob``): what the round's local update and an asynchronous one
        (``learning.asynchronous``) hand the trainer."""
        return self.job(device, start)

    def local_update(self, server_round: int, devices: Sequence[int]) -> None:
        if not devices:
            return
        trained = self.trainer.train_many([self.local_job(d, self.start_model(d)) for d in devices])
        if self.links is not None:
            trained = torch.stack([self.links.send_update(d, self.start_model(d), row) for d, row in zip(devices, trained)])
        self.theta_half[list(devices)] = trained

    def aggregate(self, server_round: int, arrived: Sequence[int]) -> None:
        self.apply_mixing(self.mixing_matrix(), arrived)

    def apply_mixing(self, weights: np.ndarray, arrived: Sequence[int]) -> None:
        """Eq. 8 over the arrived updates; each distinct row is computed once."""
        is_arrived = np.zeros(self.num_devices, dtype=bool)
        is_arrived[list(arrived)] = True
        effective = mix(weights, is_arrived)
        rows, inverse = np.unique(effective, axis=0, return_inverse=True)
        mixed = torch.from_numpy(rows).to(self.theta_half.dtype) @ self.theta_half
        for device in range(self.num_devices):
            row = rows[inverse[device]]
            if not row.any():
                continue  # nothing arrived that it mixes: it keeps its model
            self.theta[device] = mixed[inverse[device]]
            own_update = row[device] == 1.0
            if own_update:
                self.model_key[device] = ("own", device)
                self.reach.own(device, self.theta[device])  # it holds its own update: no downlink
                if self.held is not None:
                    self.held[device] = self.theta[device]
            else:
                self.model_key[device] = ("mix", row.tobytes())
                self.needs_model.add(device)
