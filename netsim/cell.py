"""A cell: one base station at the origin and its devices, placed by a seeded layout, with
their large-scale channel (TR 38.901 path loss, LOS state, log-normal shadowing).

Devices do not move, so the large-scale channel is drawn once per layout; small-scale fading
is redrawn every round by the physical system (``netsim.physical``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netsim import pathloss

LOS_MODES = ("los", "nlos", "probabilistic")


@dataclass(frozen=True)
class Cell:
    """Geometry and propagation of one cell.

    Devices are uniform over the area of the annulus ``inner_radius_m <= d2D <= outer_radius_m``
    around the base station, or at the given ``distances_m`` (uniform angles). ``los``: every
    link LOS, every link NLOS, or each device's state drawn from TR 38.901 Table 7.4.2-1.
    ``shadowing``: log-normal with the table's ``sigma_SF`` (per device, fixed). A LOS device's
    Ricean K-factor is drawn once, ``K_dB ~ N(mu_K, sigma_K)`` (Table 7.5-6); NLOS devices have 0.
    """

    scenario: str = "umi"
    carrier_hz: float = 3.5e9
    bs_height_m: float = 10.0
    ut_height_m: float = 1.5
    inner_radius_m: float = 10.0
    outer_radius_m: float = 100.0
    distances_m: tuple[float, ...] | None = None
    los: str = "probabilistic"
    shadowing: bool = True

    def __post_init__(self) -> None:
        if self.scenario not in pathloss.SCENARIOS:
            raise ValueError(f"unknown propagation scenario {self.scenario!r}; choose from {', '.join(pathloss.SCENARIOS)}")
        if not self.carrier_hz > 0:
            raise ValueError(f"carrier frequency must be > 0 Hz, got {self.carrier_hz:g}")
        if not self.inner_radius_m > 0 or not self.outer_radius_m > 0:
            raise ValueError(f"cell radii must be > 0 m, got inner {self.inner_radius_m:g}, outer {self.outer_radius_m:g}")
        if self.inner_radius_m > self.outer_radius_m:
            raise ValueError(f"inner radius {self.inner_radius_m:g} m is above the outer radius {self.outer_radius_m:g} m")
        if self.distances_m is not None and any(not d > 0 for d in self.distances_m):
            raise ValueError("device distances must be > 0 m")
        distances = self.distances_m if self.distances_m is not None else (self.inner_radius_m, self.outer_radius_m)
        pathloss.check_range(distances, self.carrier_hz)
        max_ut = pathloss.SCENARIOS[self.scenario].max_ut_height_m
        if not 1.5 <= self.ut_height_m <= max_ut or (self.scenario == "uma" and self.ut_height_m >= 13.0):
            bound = "< 13" if self.scenario == "uma" else f"<= {max_ut:g}"
            raise ValueError(f"{self.scenario} device height must be >= 1.5 and {bound} m (TR 38.901 Table 7.4.1-1), got {self.ut_height_m:g}")
        if not self.bs_height_m > 1.0:
            raise ValueError(f"base station height must be > 1 m (the effective environment height), got {self.bs_height_m:g}")
        if self.los not in LOS_MODES:
            raise ValueError(f"unknown LOS mode {self.los!r}; choose from {', '.join(LOS_MODES)}")

    @property
    def propagation(self) -> pathloss.PropagationScenario:
        return pathloss.SCENARIOS[self.scenario]

    def place(self, num_devices: int, rng: np.random.Generator) -> "CellLayout":
        """Draw the layout: positions, LOS states, shadowing.

        Radius, angle, LOS, shadowing and K-factor draws are always all taken, in that order, so
        switching LOS mode or shadowing off keeps the positions (common random numbers).
        """
        if num_devices < 1:
            raise ValueError(f"a cell needs >= 1 device, got {num_devices}")
        if self.distances_m is not None and len(self.distances_m) != num_devices:
            raise ValueError(f"{len(self.distances_m)} distances given for {num_devices} devices")
        u_radius = rng.random(num_devices)
        angle = rng.uniform(0.0, 2.0 * np.pi, num_devices)
        u_los = rng.random(num_devices)
        z_shadow = rng.standard_normal(num_devices)
        z_k = rng.standard_normal(num_devices)
        if self.distances_m is not None:
            distance = np.asarray(self.distances_m, dtype=float)
        else:  # uniform over the annulus' area: r^2 uniform between the squared radii
            r0, r1 = self.inner_radius_m, self.outer_radius_m
            distance = np.sqrt(r0**2 + u_radius * (r1**2 - r0**2))
        if self.los == "los":
            los = np.ones(num_devices, dtype=bool)
        elif self.los == "nlos":
            los = np.zeros(num_devices, dtype=bool)
        else:
            los = u_los < self.propagation.los_probability(distance)
        prop = self.propagation
        shadowing = z_shadow * prop.sigma_sf_db(los) if self.shadowing else np.zeros(num_devices)
        loss = prop.path_loss_db(distance, los, self.bs_height_m, self.ut_height_m, self.carrier_hz)
        k_factor = np.where(los, 10.0 ** ((prop.k_factor_mu_db + prop.k_factor_sigma_db * z_k) / 10.0), 0.0)
        return CellLayout(distance * np.cos(angle), distance * np.sin(angle), los, shadowing, loss, k_factor)


@dataclass(frozen=True, eq=False)
class CellLayout:
    """Positions (m, base station at the origin) and the large-scale channel of each device;
    ``k_factor``: its Ricean K-factor (linear; 0 for NLOS; None: all 0)."""

    x_m: np.ndarray
    y_m: np.ndarray
    los: np.ndarray
    shadowing_db: np.ndarray
    path_loss_db: np.ndarray
    k_factor: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.k_factor is None:
            object.__setattr__(self, "k_factor", np.zeros(np.shape(self.x_m)))

    @property
    def num_devices(self) -> int:
        return int(self.x_m.size)

    @property
    def distance_m(self) -> np.ndarray:
        return np.hypot(self.x_m, self.y_m)

    @property
    def gain_db(self) -> np.ndarray:
        """Large-scale channel gain ``-(path loss + shadowing)``, dB."""
        return -(self.path_loss_db + self.shadowing_db)
