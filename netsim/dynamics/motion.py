"""The channel in time: a cell's devices moving, their large-scale channel spatially consistent
along their paths and their fading correlated in time, read at any instant of the clock.

At time ``t`` (``ChannelInTime.at``): positions (``netsim.dynamics.mobility``); per device and
site the LOS state and shadow fading from spatially consistent fields (``netsim.dynamics.field``,
periodic on the 19-site wrap-around torus; TR 38.901 Sec. 7.6.3.1: the LOS state as
``Phi(g) < P_LOS(d)`` with ``g`` a unit Gaussian field of the LOS-state correlation distance of
Table 7.6.3.1-2, the shadow fading ``sigma_SF g'`` with the decorrelation distances of
Table 7.5-6 for LOS, NLOS and O2I links), path loss and antenna gains at the new distances and angles (``netsim.multicell``), the
serving sector (``netsim.dynamics.association``) and the SINR's interference; then each device's
fading at ``t`` (``netsim.dynamics.doppler``, Doppler shift from its speed and the carrier; the
Ricean K of a device while its serving link is LOS). This is TR 38.901 Sec. 7.6.3.2's
Procedure A in its large-scale part: the large-scale parameters follow the device as it moves
(spatially consistent), the small-scale fading evolves with the Doppler of each path.

Per device fixed for the run: its speed and direction, indoor state, height, O2I loss and
indoor distance (a device keeps its building: the O2I loss is per device, as in the static
drop), UMa's effective environment height per link. The other sites' uplink interferers stay
where the layout put them.

Leaving the parameter server's site (``Cell.coverage``): ``network`` (the default), the server
sits in the core network and every site relays to it, so a device is served by its strongest
sector wherever it goes (the uplink interference at another site's sector taken as the centre
site's at the sector of the same orientation: under wrap-around every site sees the same
ring); ``site``, only the centre site serves the learning, and a device whose strongest sector
belongs to another site is out of coverage: it takes no part while it is (dropped with reason
``out-of-coverage``, ``netsim.dynamics.rounds``); its SINR towards the centre site's best sector
is still given. The layout's ``sector`` is the serving sector's orientation (0..2: the centre
site's sector of that orientation under ``network``).

The isolated cell (no interference): a billiard in the disk of the outer radius; the path loss
at ``max(d, inner_radius_m)`` (the inner radius is the drop's minimum distance: TR 38.901's
formulas hold from 10 m).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtr

from netsim import multicell, pathloss
from netsim.cell import CellLayout
from netsim.dynamics import association, doppler
from netsim.dynamics.field import ExponentialField
from netsim.dynamics.mobility import KMH, DiskMotion, TorusMotion, table_7_8_1_speeds_m_s

# TR 38.901 Table 7.6.3.1-2: correlation distance of the LOS state; Table 7.5-6: of the shadow fading (LOS, NLOS, O2I)
LOS_CORRELATION_M = {"umi": 50.0, "uma": 50.0}
SF_CORRELATION_M = {"umi": (10.0, 13.0, 7.0), "uma": (37.0, 50.0, 7.0)}
LOS_FIELD, SF_LOS, SF_NLOS, SF_O2I = range(4)


@dataclass
class ChannelInTime:
    """One run's moving channel (built from its system and initial layout by ``start``); its only
    state is the association (``serving``, its layer-3 filter and time to trigger), the last reading's
    filtered coupling gains and the handovers logged so far."""

    system: object  # netsim.physical.PhysicalSystem
    layout: CellLayout  # at t = 0 as the cell placed it: the devices' start, indoor states and heights, the interferers
    motion: object  # TorusMotion or DiskMotion
    speed_m_s: np.ndarray
    fields: ExponentialField  # sites x 4
    o2i_loss_db: np.ndarray
    indoor_distance_m: np.ndarray
    effective_height_m: np.ndarray  # devices x sites
    k_los: np.ndarray  # each device's Ricean K while its serving link is LOS
    downlink_fading: doppler.SumOfSinusoids
    uplink_fading: doppler.SumOfSinusoids
    l3_filter: association.L3Filter
    trigger: association.Trigger | None = None
    serving: np.ndarray | None = None
    measured_db: np.ndarray | None = None  # every sector's layer-3 filtered coupling gain at the last committed reading (devices x sectors)
    handovers: list = field(default_factory=list)
    _cache: dict = field(default_factory=dict)

    @classmethod
    def start(cls, system, layout: CellLayout, rng: np.random.Generator) -> "ChannelInTime":
        """Draw the run's paths, fields and fading processes from ``rng`` (the network seed's motion child)."""
        cell = system.cell
        n = layout.num_devices
        indoor = np.zeros(n, dtype=bool) if layout.indoor is None else layout.indoor
        speed = table_7_8_1_speeds_m_s(indoor) if cell.speed_kmh == "38.901" else np.full(n, float(cell.speed_kmh) * KMH)
        sites = multicell.SITES if cell.interference else 1
        los_m, sf_m = LOS_CORRELATION_M[cell.scenario], SF_CORRELATION_M[cell.scenario]
        shifts = multicell.wrap_shifts(cell.inter_site_distance_m)
        fields = ExponentialField.draw(rng, np.broadcast_to(np.array([los_m, *sf_m]), (sites, 4)),
                                       period_m=shifts[1:3] if cell.interference else None)  # periodic on the torus
        if cell.interference:
            motion = TorusMotion.draw(rng, layout.x_m, layout.y_m, speed, shifts)
            d_in = np.minimum(rng.uniform(0.0, multicell.INDOOR_DISTANCE_MAX_M, n), rng.uniform(0.0, multicell.INDOOR_DISTANCE_MAX_M, n))
            low = rng.random(n) < cell.o2i_low_loss_fraction
            o2i = np.where(indoor, multicell.o2i_loss_db(cell.carrier_hz, low, d_in, rng.standard_normal(n)), 0.0)
            d2d = np.hypot(*_site_vectors(layout.x_m, layout.y_m, cell.inter_site_distance_m))
            h_e = (pathloss.uma_effective_height_m(rng, d2d, layout.height_m[:, None]) if cell.scenario == "uma"
                   else np.ones_like(d2d))
            d_in = np.where(indoor, d_in, 0.0)
        else:
            motion = DiskMotion.draw(rng, layout.x_m, layout.y_m, speed, cell.outer_radius_m)
            o2i, d_in, h_e = np.zeros(n), np.zeros(n), np.ones((n, 1))
        prop = cell.propagation
        k_los = np.where(layout.k_factor > 0, layout.k_factor,
                         10.0 ** ((cell.k_factor_mean_db + prop.k_factor_sigma_db * rng.standard_normal(n)) / 10.0))
        f_d = np.repeat(doppler.doppler_hz(speed, cell.carrier_hz)[:, None], system.subbands, axis=1)
        downlink = doppler.SumOfSinusoids.draw(rng, f_d)
        uplink = downlink if system.duplex == "tdd" else doppler.SumOfSinusoids.draw(rng, f_d)
        trigger = association.Trigger(n, cell.handover_ttt_s) if cell.handover_ttt_s > 0 else None
        return cls(system, layout, motion, speed, fields, o2i, d_in, h_e, k_los, downlink, uplink,
                   association.L3Filter(cell.handover_filter_k), trigger)

    def at(self, t_s: float, commit: bool = True) -> tuple[CellLayout, np.ndarray, np.ndarray, np.ndarray]:
        """(layout at ``t_s``, downlink ``|h|^2``, uplink ``|h|^2`` (devices x subbands), out of
        coverage per device). ``commit``: the association moves on to ``t_s`` and its handovers
        are logged (a report of an earlier instant reads without moving it)."""
        key = (float(t_s), commit)
        if key not in self._cache:
            self._cache.clear()
            layout, out = self._large_scale(float(t_s), commit)
            if self.system.fading == "none":
                downlink = uplink = np.ones((layout.num_devices, self.system.subbands))
            else:
                k = self._k_factor(layout.los)
                downlink = self.downlink_fading.power(t_s, k)
                uplink = downlink if self.uplink_fading is self.downlink_fading else self.uplink_fading.power(t_s, k)
            self._cache[key] = (layout, downlink, uplink, out)
        return self._cache[key]

    def _k_factor(self, los: np.ndarray) -> np.ndarray:
        if self.system.fading == "rayleigh":
            return np.zeros((los.size, 1))
        return np.where(los, self.k_los, 0.0)[:, None]

    def _large_scale(self, t_s: float, commit: bool) -> tuple[CellLayout, np.ndarray]:
        cell = self.system.cell
        x, y = self.motion.positions(t_s)
        if not cell.interference:
            return self._isolated(x, y), np.zeros(x.size, dtype=bool)
        prop = cell.propagation
        vx, vy = _site_vectors(x, y, cell.inter_site_distance_m)
        d2d = np.hypot(vx, vy)
        h = self.layout.height_m[:, None]
        d_out = np.maximum(d2d - self.indoor_distance_m[:, None], 0.0)
        los = self._los(x, y, lambda: prop.los_probability(d_out, h), d2d.shape)
        loss = prop.path_loss_db(np.maximum(d2d, pathloss.MIN_DISTANCE_M), los, cell.bs_height_m, h, cell.carrier_hz, self.effective_height_m)
        if cell.shadowing:  # an indoor device reads the O2I field to every site; an outdoor one its link's LOS or NLOS field
            z = np.empty(d2d.shape)
            inside = self.layout.indoor
            z[inside] = self.fields.select(x[inside], y[inside], SF_O2I)
            z[~inside] = self.fields.select(x[~inside], y[~inside], np.where(los[~inside], SF_LOS, SF_NLOS))
            shadowing = prop.sigma_sf_db(los, self.layout.indoor[:, None]) * z
        else:
            shadowing = np.zeros_like(d2d)
        zenith = np.degrees(np.arctan2(d2d, h - cell.bs_height_m))
        array = array_gain_db(zenith, cell.bs_elements, cell.downtilt_deg)
        bearing = np.degrees(np.arctan2(vy, vx))
        relative = bearing[:, :, None] - np.array(multicell.SECTOR_AZIMUTHS_DEG)  # in (-450, 150]: wrapped to (-180, 180]
        relative[relative <= -180.0] += 360.0
        relative[relative <= -180.0] += 360.0
        antenna = (multicell.element_gain_db(zenith[:, :, None], relative) + array[:, :, None]).reshape(x.size, -1)
        coupling = antenna - np.repeat(loss + shadowing + self.o2i_loss_db[:, None], 3, axis=1)
        measured = self.l3_filter.read(t_s, coupling, commit)
        serving = association.strongest(measured, self.serving, cell.handover_margin_db)
        if self.trigger is not None and self.serving is not None:
            serving = self.trigger.confirm(t_s, self.serving, serving) if commit else self.serving
        if commit:
            if self.serving is not None:
                self.handovers.extend(association.handovers(t_s, self.serving, serving))
            self.serving, self.measured_db = serving, measured
        rows = np.arange(x.size)
        if cell.coverage == "site":
            out = serving // 3 != multicell.PS_SITE
            sector = np.where(out, np.argmax(coupling[:, :3], axis=1), serving)  # the parameter server's sector
        else:
            out = np.zeros(x.size, dtype=bool)
            sector = serving
        gain = 10.0 ** (coupling / 10.0)
        load = cell.interference_load
        orientation = sector % 3  # the uplink interference of any site's sector: the centre's of its orientation (wrap-around)
        with np.errstate(divide="ignore"):
            downlink = 10.0 * np.log10(load * (gain.sum(axis=1) - gain[rows, sector]))
            uplink = 10.0 * np.log10(load * (10.0 ** (self.layout.interferer_gain_db / 10.0)).sum(axis=0)[orientation])
        site = sector // 3
        layout = CellLayout(x, y, los[rows, site], shadowing[rows, site], loss[rows, site] + self.o2i_loss_db, self.k_los * los[rows, site],
                            bs_gain_db=antenna[rows, sector], downlink_interference_db=downlink, uplink_interference_db=uplink,
                            indoor=self.layout.indoor, height_m=self.layout.height_m, sector=orientation,
                            interferer_gain_db=self.layout.interferer_gain_db,
                            interferer_coupling_loss_db=self.layout.interferer_coupling_loss_db)
        return layout, out

    def _los(self, x, y, probability, shape) -> np.ndarray:
        """Every link's LOS state (devices x sites): the cell's fixed state, or ``Phi(g) < P_LOS``."""
        los = self.system.cell.los
        if los != "probabilistic":
            return np.full(shape, los == "los")
        return ndtr(self.fields.select(x, y, LOS_FIELD)) < probability()

    def _isolated(self, x: np.ndarray, y: np.ndarray) -> CellLayout:
        cell = self.system.cell
        prop = cell.propagation
        d = np.maximum(np.hypot(x, y), cell.inner_radius_m)
        los = self._los(x, y, lambda: prop.los_probability(d), (x.size, 1))[:, 0]
        g = self.fields.select(x, y, np.where(los, SF_LOS, SF_NLOS)[:, None])[:, 0]
        shadowing = prop.sigma_sf_db(los) * g if cell.shadowing else np.zeros(x.size)
        loss = prop.path_loss_db(d, los, cell.bs_height_m, cell.ut_height_m, cell.carrier_hz)
        return CellLayout(x, y, los, shadowing, loss, self.k_los * los)


def array_gain_db(zenith_deg, elements: int, downtilt_deg: float) -> np.ndarray:
    """``netsim.multicell.array_gain_db`` in closed form, ``sin^2(M psi/2) / (M sin^2(psi/2))``
    (``M`` at ``psi = 0``): the same gain without summing the elements (in single precision:
    within 1e-4 dB of it outside the nulls)."""
    psi = (np.pi * (np.cos(np.radians(zenith_deg)) - np.cos(np.radians(90.0 + downtilt_deg)))).astype(np.float32)
    half = np.sin(psi / 2)
    tiny = np.abs(half) < 1e-6
    ratio = np.where(tiny, np.float32(elements), np.sin(elements * psi / 2) ** 2 / (elements * np.where(tiny, 1, half) ** 2))
    return 10.0 * np.log10(np.maximum(ratio, 1e-30).astype(float))


def _site_vectors(x, y, isd_m: float) -> tuple[np.ndarray, np.ndarray]:
    """Per device and site, the vector from the site's nearest wrap-around image to the device
    (devices x sites; the image picked in single precision, the vector in double)."""
    images = multicell.hex_sites(isd_m)[None, :, :] + multicell.wrap_shifts(isd_m)[:, None, :]  # 7 x 19 x 2
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    vx = x.astype(np.float32)[:, None, None] - images[None, :, :, 0].astype(np.float32)
    vy = y.astype(np.float32)[:, None, None] - images[None, :, :, 1].astype(np.float32)
    vx *= vx
    vy *= vy
    vx += vy
    nearest = np.argmin(vx, axis=1)  # devices x sites: which of the 7 images
    sites = np.arange(images.shape[1])
    return x[:, None] - images[nearest, sites, 0], y[:, None] - images[nearest, sites, 1]
