"""Self-FL's set-ups (4.1, G.1): FedProx's non-IID MNIST with a logistic model, and scalar data
from the two-level Gaussian model (sec. 2.1) in a homogeneous and a heterogeneous variant.

Substitution: MNIST pixels are scaled to [0, 1] instead of FedProx's per-pixel standardization.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch

from learning.data import DeviceData, FederatedData
from learning.training import LocalTraining
from scenarios.library.sources import image_arrays, image_devices
from scenarios.definitions.partitions import fedprox_split, two_level_gaussian
from scenarios.definitions.scenario import Scenario

FEDPROX_DEVICES = 1000
FEDPROX_VALIDATION_FRACTION = 0.1  # FedProx's generator keeps 90% of each device's points for training

GAUSSIAN_DEVICES = 20  # M (4.1)
THETA_0 = 1.6  # parent parameter (G.1)
INTRA_VARIANCE = 0.1  # sigma_m^2, every client (G.1)
HOMOGENEOUS = {"inter_variance": 0.001, "sizes": (10, 20)}  # G.1 case 1: sigma_0^2, N_m ~ U{10..20}
HETEROGENEOUS = {"inter_variance": 1.0, "sizes": (10, 200)}  # G.1 case 2: sigma_0^2, N_m ~ U{10..200}
VALIDATION_PER_TRAIN = 1 / 3  # fresh validation draws, so each client keeps the paper's N_m for training
# Full-batch gradient descent, 50 local steps (G.1). The paper's lr 1e-4 acts on the summed
# negative log-likelihood; the Trainer steps on its mean, so lr = 1e-4 * 15 is the paper's step
# at N_m = 15 (the same contraction, 1 - 0.015 per step, for every client).
GAUSSIAN_TRAINING = LocalTraining(lr=1.5e-3, momentum=0.0, batch_size=HETEROGENEOUS["sizes"][1], epochs=50)


def build_fedprox_mnist(rng: np.random.Generator, data_dir=None) -> FederatedData:
    """MNIST train and test images together (FedProx used all 70,000) over 1,000 devices, two
    digits each, heavy-tailed sizes (``fedprox_split``); no groups."""
    train_images, train_labels = image_arrays("mnist", data_dir, "train")
    test_images, test_labels = image_arrays("mnist", data_dir, "test")
    images, labels = np.concatenate([train_images, test_images]), np.concatenate([train_labels, test_labels])
    parts = fedprox_split(labels, FEDPROX_DEVICES, rng)
    devices = image_devices(images, labels, parts, FEDPROX_VALIDATION_FRACTION, rng)
    return FederatedData(devices, num_classes=10, info={"dataset": "mnist"})


def build_two_level_gaussian(rng: np.random.Generator, data_dir=None, *, inter_variance: float, sizes: tuple[int, int]) -> FederatedData:
    """Client m draws ``theta_m ~ N(1.6, sigma_0^2)``, ``N_m`` training samples and ``N_m / 3``
    validation samples from ``N(theta_m, 0.1)``; x is a dummy zero column (the model ignores it)."""
    train_sizes = rng.integers(sizes[0], sizes[1], size=GAUSSIAN_DEVICES, endpoint=True)
    val_sizes = np.ceil(train_sizes * VALIDATION_PER_TRAIN).astype(np.int64)
    means, samples = two_level_gaussian(train_sizes + val_sizes, THETA_0, inter_variance, INTRA_VARIANCE, rng)
    devices = []
    for n_train, values in zip(train_sizes, samples):
        y = torch.as_tensor(values, dtype=torch.float32)
        x = torch.zeros(y.shape[0], 1)
        devices.append(DeviceData(x[:n_train], y[:n_train], x[n_train:], y[n_train:]))
    info = {
        "true_parameters": means.reshape(-1, 1),
        "true_global_parameter": THETA_0,
        "inter_variance": inter_variance,
        "intra_variance": INTRA_VARIANCE,
    }
    return FederatedData(tuple(devices), num_classes=1, task="regression", info=info, noise_variance=INTRA_VARIANCE)


MNIST_FEDPROX = Scenario(
    name="mnist-fedprox",
    version=1,
    description=(
        f"Self-FL 4.1 MNIST: FedProx's non-IID split of all 70,000 MNIST images over {FEDPROX_DEVICES} devices, "
        "two digits each, log-normal ('power law') sizes, 10% validation per device; multinomial logistic "
        "regression, lr 0.03, batch 10, 20 local epochs (FedProx's settings), activity rate 0.1, 200 rounds"
    ),
    build=build_fedprox_mnist,
    model_name="logistic",
    model_kwargs={"in_features": 28 * 28, "num_classes": 10},
    # Self-FL: "a fixed local training step of 20" for the baselines, read as FedProx's E = 20
    training=LocalTraining(lr=0.03, momentum=0.0, batch_size=10, epochs=20, init="torch"),  # no reference code to match: PyTorch defaults, as measured so far
    rounds=200,
    participation=0.1,
    algorithm_options={"self-fl": {"max_local_steps": 40}},  # l_max (4.2)
    datasets=("mnist",),
)


def _gaussian(name: str, variant: dict, label: str) -> Scenario:
    low, high = variant["sizes"]
    return Scenario(
        name=name,
        version=2,  # 2: the loss is the Gaussian negative log-likelihood
        description=(
            f"Self-FL G.1 {label} synthetic data: {GAUSSIAN_DEVICES} clients, theta_m ~ N({THETA_0}, "
            f"{variant['inter_variance']}), N_m ~ U{{{low}..{high}}} scalar samples ~ N(theta_m, {INTRA_VARIANCE}) "
            "plus N_m/3 for validation; one scalar parameter, Gaussian negative log-likelihood, "
            "50 full-batch steps per round, full participation (the paper sweeps 0.1-1), 200 rounds"
        ),
        build=partial(build_two_level_gaussian, **variant),
        model_name="scalar-mean",
        model_kwargs={},
        training=GAUSSIAN_TRAINING,
        rounds=200,
        small=True,
        # Sec. 3.1's asymptotic sigma_m^2 (exact for this model; full-batch steps leave eq. 13
        # nothing to measure) and eq. 16's step counts uncapped in G.1 (2,000 bounds them)
        algorithm_options={"self-fl": {"intra_variance": "fisher", "max_local_steps": 2000}},
    )


SCENARIOS = (
    MNIST_FEDPROX,
    _gaussian("synthetic-gaussian", HOMOGENEOUS, "homogeneous (case 1)"),
    _gaussian("synthetic-gaussian-heterogeneous", HETEROGENEOUS, "heterogeneous (case 2)"),
)
