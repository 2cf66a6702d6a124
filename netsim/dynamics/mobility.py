"""Where every device is at any time: straight-line motion at its own speed, folded into the
layout (vectorized over devices, like Sionna's scenario state: positions and velocities).

- Speeds (TR 38.901 Table 7.8-1, "UT mobility (horizontal plane only)"): indoor devices 3 km/h,
  outdoor devices 30 km/h (in car), or one speed for every device, given by the user.
- The 19-site layout with wrap-around (``netsim.radio.multicell``) is a torus: the plane tiled by the
  cluster shifted along the lattice of ``wrap_shifts``. A device keeps its random direction
  (uniform, drawn once) for ever, and its position is folded back into the lattice's central
  cell: the random-direction model with no edge to bounce off, whose positions stay uniform and
  whose paths are straight (what the boundary-crossing rate ``(2/pi) v L / A`` assumes).
- The isolated cell: a billiard in the disk of the cell's outer radius (specular reflection at
  its edge). Each chord keeps the same distance ``b`` to the centre, so after travelling ``D``
  from the first chord's closest point ``s0`` the device has made ``m = floor((s0 + D + c) / 2c)``
  reflections (``c = sqrt(R^2 - b^2)``), each turning the chord by ``2 arccos(b / R)``: positions
  at any time, with no state.

Heights do not change (horizontal plane only, as the table says).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

INDOOR_SPEED_KMH, OUTDOOR_SPEED_KMH = 3.0, 30.0  # TR 38.901 Table 7.8-1 UT mobility
KMH = 1000.0 / 3600.0


def table_7_8_1_speeds_m_s(indoor) -> np.ndarray:
    """Per device, Table 7.8-1's speed: 3 km/h indoors, 30 km/h (in car) outdoors."""
    return np.where(np.asarray(indoor, dtype=bool), INDOOR_SPEED_KMH, OUTDOOR_SPEED_KMH) * KMH


@dataclass(frozen=True)
class TorusMotion:
    """Straight lines on the 19-site wrap-around torus: start ``(x0, y0)`` (m), velocity (m/s),
    and the lattice of the cluster's translations (``basis``: two of ``multicell.wrap_shifts``)."""

    x0_m: np.ndarray
    y0_m: np.ndarray
    vx_m_s: np.ndarray
    vy_m_s: np.ndarray
    basis: np.ndarray  # 2 x 2, rows are lattice vectors

    @classmethod
    def draw(cls, rng: np.random.Generator, x_m, y_m, speed_m_s, shifts: np.ndarray) -> "TorusMotion":
        """Directions uniform (one draw per device); ``shifts`` the six translations of the cluster."""
        direction = rng.uniform(0.0, 2.0 * np.pi, np.shape(x_m))
        speed = np.broadcast_to(np.asarray(speed_m_s, dtype=float), np.shape(x_m))
        return cls(np.asarray(x_m, dtype=float), np.asarray(y_m, dtype=float), speed * np.cos(direction), speed * np.sin(direction),
                   np.asarray(shifts[1:3], dtype=float))

    def positions(self, t_s: float) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) at ``t_s``, in the lattice cell around the centre site (the nearest image to it)."""
        return self._folded(self.x0_m + self.vx_m_s * t_s, self.y0_m + self.vy_m_s * t_s)

    def distance_from_start_m(self, x_m, y_m) -> np.ndarray:
        """Each device's distance from its start (the shortest over the torus's images)."""
        return np.hypot(*self._folded(np.asarray(x_m) - self.x0_m, np.asarray(y_m) - self.y0_m))

    @functools.cached_property
    def _lattice(self) -> tuple[np.ndarray, np.ndarray]:
        """``_folded``'s constants, computed once per motion (a moving cell folds every device at
        each measurement instant): the inverse of the basis (transposed), and the origin's
        lattice point and its six neighbours (7 x 2)."""
        steps = np.array([(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1)], dtype=float) @ self.basis
        return np.linalg.inv(self.basis.T), steps

    def _folded(self, x, y) -> tuple[np.ndarray, np.ndarray]:
        """Points folded by the lattice into its cell around the origin (each point's image nearest to it)."""
        # lattice coordinates, rounded: a nearby lattice point; then the nearest of it and its six neighbours
        inverse, steps = self._lattice
        a, b = inverse @ np.stack([x, y])
        a, b = np.rint(a), np.rint(b)
        x = x - a * self.basis[0, 0] - b * self.basis[1, 0]
        y = y - a * self.basis[0, 1] - b * self.basis[1, 1]
        cx, cy = x[:, None] - steps[:, 0], y[:, None] - steps[:, 1]
        pick = np.argmin(cx * cx + cy * cy, axis=1)[:, None]
        return np.take_along_axis(cx, pick, axis=1)[:, 0], np.take_along_axis(cy, pick, axis=1)[:, 0]


@dataclass(frozen=True)
class DiskMotion:
    """A billiard in the disk of radius ``radius_m`` around the base station (the isolated cell)."""

    normal_x: np.ndarray  # unit normal of the first chord (towards it from the centre)
    normal_y: np.ndarray
    ux: np.ndarray  # direction of travel on the first chord
    uy: np.ndarray
    b_m: np.ndarray  # the chords' distance to the centre
    s0_m: np.ndarray  # where the device starts along the first chord (from its closest point)
    speed_m_s: np.ndarray
    turn_rad: np.ndarray  # rotation of the chord at each reflection
    radius_m: float

    @classmethod
    def draw(cls, rng: np.random.Generator, x_m, y_m, speed_m_s, radius_m: float) -> "DiskMotion":
        x, y = np.asarray(x_m, dtype=float), np.asarray(y_m, dtype=float)
        direction = rng.uniform(0.0, 2.0 * np.pi, x.shape)
        ux, uy = np.cos(direction), np.sin(direction)
        s0 = x * ux + y * uy
        nx, ny = x - s0 * ux, y - s0 * uy
        b = np.hypot(nx, ny)
        degenerate = b < 1e-9  # a chord through the centre: any normal
        nx, ny = np.where(degenerate, -uy, nx / np.where(degenerate, 1.0, b)), np.where(degenerate, ux, ny / np.where(degenerate, 1.0, b))
        b = np.minimum(b, radius_m)
        orientation = np.sign(nx * uy - ny * ux)
        orientation = np.where(orientation == 0, 1.0, orientation)
        turn = orientation * 2.0 * np.arccos(b / radius_m)
        speed = np.broadcast_to(np.asarray(speed_m_s, dtype=float), x.shape)
        return cls(nx, ny, ux, uy, b, s0, speed.copy(), turn, float(radius_m))

    def distance_from_start_m(self, x_m, y_m) -> np.ndarray:
        """Each device's distance from its start (straight, across the disk)."""
        return np.hypot(np.asarray(x_m) - (self.b_m * self.normal_x + self.s0_m * self.ux),
                        np.asarray(y_m) - (self.b_m * self.normal_y + self.s0_m * self.uy))

    def positions(self, t_s: float) -> tuple[np.ndarray, np.ndarray]:
        half = np.sqrt(np.maximum(self.radius_m**2 - self.b_m**2, 0.0))
        chord = np.maximum(2.0 * half, 1e-12)
        s = self.s0_m + self.speed_m_s * t_s + half
        reflections = np.floor(s / chord)
        s = s - reflections * chord - half
        x = self.b_m * self.normal_x + s * self.ux
        y = self.b_m * self.normal_y + s * self.uy
        angle = reflections * self.turn_rad
        c, si = np.cos(angle), np.sin(angle)
        return c * x - si * y, si * x + c * y
