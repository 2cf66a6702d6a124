"""The channel in time: a cell's devices moving, their large-scale channel spatially consistent
along their paths and their fading correlated in time, read at any instant of the clock.

It continues the static cell's channel (``netsim.radio.cell.LinkDraws``: the drop's LOS uniforms,
unit shadowing, O2I losses, indoor distances, ``h_E`` and K-factors), so at t = 0 it is the
static cell's and runs that differ only in speed share their channel (common random numbers).

At time ``t`` (``ChannelInTime.at``): positions (``netsim.dynamics.mobility``); per device and
site the LOS state and shadow fading from spatially consistent fields (``netsim.dynamics.field``,
periodic on the 19-site wrap-around torus; TR 38.901 Sec. 7.6.3.1: the LOS state as
``Phi(g) < P_LOS(d)`` with ``g`` a unit Gaussian field of the LOS-state correlation distance of
Table 7.6.3.1-2, the shadow fading ``sigma_SF g'`` with the decorrelation distances of
Table 7.5-6 for LOS, NLOS and O2I links), each conditioned on the drop's value at the device's
start (``_continued``), path loss and antenna gains at the new distances and angles
(``netsim.radio.multicell``), the serving sector of the association, which measures on its own clock
(``measure_until``, every 200 ms: ``netsim.dynamics.association``), and the SINR's
interference; then, under ``fading_in_time`` ``doppler``, each device's fading at ``t``
(``netsim.dynamics.doppler``, Doppler shift from its speed and the carrier; the Ricean K of an
outdoor device while its serving link is LOS); under ``block`` the network draws the round's
fading itself, as on a static cell. This is TR 38.901 Sec. 7.6.3.2's Procedure A in its
large-scale part: the large-scale parameters follow the device as it moves (spatially
consistent).

Per device fixed for the run: its speed and direction, indoor state, height, O2I loss and
indoor distance (a device keeps its building: the drop's), UMa's effective environment height
per link (the drop's). The other sites' uplink interferers stay where the layout put them.

Leaving the parameter server's site (``Cell.coverage``): ``network`` (the default), the server
sits in the core network and every site relays to it, so a device is served by its strongest
sector wherever it goes (the uplink interference at another site's sector taken as the centre
site's at the sector of the same orientation: under wrap-around every site sees the same
ring); ``site``, only the centre site serves the learning, and a device whose strongest sector
belongs to another site is out of coverage: it takes no part while it is (dropped with reason
``out-of-coverage``, ``netsim.dynamics.rounds``); its SINR towards the centre site's best sector
is still given. The layout's ``sector`` is the serving sector's orientation (0..2) and its
``site`` the serving site: under ``network`` a device served by another site's sector queues at
that sector's receiver (``PhysicalNetwork.uplink_queue``), not the centre's.

The isolated cell (no interference): a billiard in the disk of the outer radius; the path loss
at ``max(d, inner_radius_m)`` (the inner radius is the drop's minimum distance: TR 38.901's
formulas hold from 10 m).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtr, ndtri

from netsim.radio import multicell, pathloss
from netsim.radio.cell import CellLayout
from netsim.dynamics import association, doppler
from netsim.dynamics.field import ExponentialField
from netsim.dynamics.mobility import KMH, DiskMotion, TorusMotion, table_7_8_1_speeds_m_s

# TR 38.901 Table 7.6.3.1-2: correlation distance of the LOS state; Table 7.5-6: of the shadow fading (LOS, NLOS, O2I)
LOS_CORRELATION_M = {"umi": 50.0, "uma": 50.0}
SF_CORRELATION_M = {"umi": (10.0, 13.0, 7.0), "uma": (37.0, 50.0, 7.0)}
LOS_FIELD, SF_LOS, SF_NLOS, SF_O2I = range(4)
FULL_EVERY = 5  # every fifth measurement (each second at 200 ms) reads all 57 sectors; those between, each device's CANDIDATE_SITES
CANDIDATE_SITES = 3  # the sites (3 sectors each) a device measures between two full measurements: its strongest then, its serving one's among them
STILL_M = 1e-9  # a device closer than this to its start has not moved (positions' rounding: the billiard's ~1e-14 m at t = 0)


@dataclass
class ChannelInTime:
    """One run's moving channel (built from its system and initial layout by ``start``); its only
    state is the association (``serving``, its layer-3 filter and time to trigger, run at its own
    measurement instants: ``measure_until``), the last measurement's filtered coupling gains and
    the handovers logged so far."""

    system: object  # netsim.radio.physical.PhysicalSystem
    layout: CellLayout  # at t = 0 as the cell placed it: the devices' start, indoor states and heights, the interferers
    motion: object  # TorusMotion or DiskMotion
    speed_m_s: np.ndarray
    fields: ExponentialField  # sites x 4
    start_z: np.ndarray  # devices x sites x 4: each link's drop value (LOS quantile, then its unit shadowing for each kind)
    start_field: np.ndarray  # devices x sites x 4: the fields at the devices' start
    downlink_fading: doppler.SumOfSinusoids | None  # None: block fading, drawn per round by the network
    uplink_fading: doppler.SumOfSinusoids | None
    l3_filter: association.L3Filter
    trigger: association.Trigger | None = None
    measurement_period_s: float = association.L1_PERIOD_S
    serving: np.ndarray | None = None
    measured_db: np.ndarray | None = None  # every sector's layer-3 filtered coupling gain at the last measurement (devices x sectors)
    measurements: int = 0  # the measurement instants run so far: k P for k < measurements
    candidates: np.ndarray | None = None  # devices x CANDIDATE_SITES: the sites measured between two full measurements
    handovers: list = field(default_factory=list)
    _cache: dict = field(default_factory=dict)
    _coupling: tuple = (None, None)  # (t, coupling_db(t)) of the last instant computed

    @classmethod
    def start(cls, system, layout: CellLayout, rng: np.random.Generator,
              measurement_period_s: float = association.L1_PERIOD_S) -> "ChannelInTime":
        """Draw the run's fields, paths and (``fading_in_time`` ``doppler``) fading processes from
        ``rng`` (the network seed's motion child), in that order; everything the drop drew
        (``layout.draws``: LOS states, shadowing, O2I losses, ``h_E``, K-factors) is the static
        cell's, so the channel at t = 0 is the static cell's channel."""
        cell = system.cell
        if layout.draws is None:
            raise ValueError("a channel in time continues a layout the cell placed (Cell.place): this one has no draws")
        n = layout.num_devices
        indoor = np.zeros(n, dtype=bool) if layout.indoor is None else layout.indoor
        speed = table_7_8_1_speeds_m_s(indoor) if cell.speed_kmh == "38.901" else np.full(n, float(cell.speed_kmh) * KMH)
        sites = multicell.SITES if cell.interference else 1
        shifts = multicell.wrap_shifts(cell.inter_site_distance_m)
        fields = ExponentialField.draw(rng, np.broadcast_to(correlation_m(cell.scenario), (sites, 4)),
                                       period_m=shifts[1:3] if cell.interference else None)  # periodic on the torus
        if cell.interference:
            motion = TorusMotion.draw(rng, layout.x_m, layout.y_m, speed, shifts)
        else:
            motion = DiskMotion.draw(rng, layout.x_m, layout.y_m, speed, cell.outer_radius_m)
        draws = layout.draws
        start_z = np.empty((n, sites, 4))
        start_z[:, :, LOS_FIELD] = ndtri(draws.los_uniform)
        start_z[:, :, SF_LOS:] = draws.shadowing_z[:, :, None]
        if system.fading_in_time == "doppler":
            f_d = np.repeat(doppler.doppler_hz(speed, cell.carrier_hz)[:, None], system.subbands, axis=1)
            downlink = doppler.SumOfSinusoids.draw(rng, f_d)
            uplink = downlink if system.duplex == "tdd" else doppler.SumOfSinusoids.draw(rng, f_d)
        else:
            downlink = uplink = None
        trigger = association.Trigger(n, cell.handover_ttt_s) if cell.handover_ttt_s > 0 else None
        return cls(system, layout, motion, speed, fields, start_z, fields.at(layout.x_m, layout.y_m), downlink, uplink,
                   association.L3Filter(cell.handover_filter_k), trigger, float(measurement_period_s))

    @property
    def draws(self):
        return self.layout.draws

    def at(self, t_s: float) -> tuple[CellLayout, np.ndarray | None, np.ndarray | None, np.ndarray]:
        """(layout at ``t_s``, downlink ``|h|^2``, uplink ``|h|^2`` (devices x subbands; None under
        block fading, which the network draws per round from the fading stream), out of coverage
        per device). The serving sector is the association's at ``t_s``: its measurements run up
        to ``t_s`` first (``measure_until``; they are at fixed instants, so what they do does not
        depend on who reads when), and a reading of an earlier instant (a report ``csi_delay_s``
        old) sees the sectors of its instant (``serving_at``)."""
        key = float(t_s)
        if key not in self._cache:
            self._cache.clear()
            self.measure_until(key)
            layout, out = self._large_scale(float(t_s))
            if self.downlink_fading is None:
                downlink = uplink = None
            elif self.system.fading == "none":
                downlink = uplink = np.ones((layout.num_devices, self.system.subbands))
            else:
                k = self._k_factor(layout.k_factor)
                downlink = self.downlink_fading.power(t_s, k)
                uplink = downlink if self.uplink_fading is self.downlink_fading else self.uplink_fading.power(t_s, k)
            self._cache[key] = (layout, downlink, uplink, out)
        return self._cache[key]

    def _k_factor(self, k_factor: np.ndarray) -> np.ndarray:
        if self.system.fading == "rayleigh":
            return np.zeros((k_factor.size, 1))
        return k_factor[:, None]

    def _continued(self, x, y, which, sites=None, d_m=None) -> np.ndarray:
        """Unit Gaussian values of each link's field of kind ``which`` (an int, or devices x sites)
        at the devices' positions at ``t_s``, continued from the drop's: the field conditioned on
        the drop's value at the start, ``g(x) + rho (z_0 - g(x_0))``, ``rho = exp(-d / d_corr)``
        with ``d`` the distance from the start (the shortest on the torus); ``sites``: the
        links to the sites ``sites`` (devices x m) only (None: to every site). For a Gaussian field
        of correlation ``exp(-d / d_corr)`` and ``z_0`` drawn from its marginal this has the
        field's own law (variance 1, correlation ``exp(-|x - x'| / d_corr)`` between any two
        points: the correlation of the sum is ``rho_xx' - rho_x rho_x' - rho_x rho_x' +
        rho_x rho_x' + rho_x rho_x'``), and it is the drop's value at t = 0 (exactly: a device that
        has not moved reads ``z_0``). ``d_m``: each device's distance from its start (devices x 1),
        where the caller has it already."""
        d_m = self.motion.distance_from_start_m(x, y)[:, None] if d_m is None else d_m
        corr = correlation_m(self.system.cell.scenario)
        rows = np.arange(x.size)[:, None]
        if sites is not None:
            z0, g0 = self.start_z[rows, sites, which], self.start_field[rows, sites, which]
            field_now = self.fields.select_links(x, y, sites, which)
        elif np.ndim(which) == 0:
            z0, g0 = self.start_z[:, :, which], self.start_field[:, :, which]
            field_now = self.fields.select(x, y, which)
        else:
            every = np.arange(self.start_z.shape[1])
            z0, g0 = self.start_z[rows, every, which], self.start_field[rows, every, which]
            field_now = self.fields.select(x, y, which)
        value = field_now + np.exp(-d_m / corr[which]) * (z0 - g0)
        return np.where(d_m < STILL_M, z0, value)  # not moved (t = 0, or speed 0): the drop's value itself

    def coupling_db(self, t_s: float) -> tuple:
        """Every link at ``t_s``: (x, y, devices x sites LOS states, path losses and shadowing,
        devices x sectors antenna gains and coupling gains)."""
        if self._coupling[0] != t_s:
            self._coupling = (t_s, self._links(t_s))
        return self._coupling[1]

    def _links(self, t_s: float, sites: np.ndarray | None = None) -> tuple:
        """``coupling_db``'s links at ``t_s``, to every site or (``sites``, devices x m) to those
        only (then devices x m and devices x 3m, the sectors of each site in turn)."""
        cell = self.system.cell
        prop = cell.propagation
        draws = self.draws
        x, y = self.motion.positions(t_s)
        vx, vy = _site_vectors(x, y, cell.inter_site_distance_m, sites)
        d2d = np.hypot(vx, vy)
        h = self.layout.height_m[:, None]
        d_out = np.maximum(d2d - draws.indoor_distance_m[:, None], 0.0)
        # each device's distance from its start, which both fields' continuation reads (computed once)
        moved_m = self.motion.distance_from_start_m(x, y)[:, None] if cell.los == "probabilistic" or cell.shadowing else None
        los = self._los(x, y, lambda: prop.los_probability(d_out, h), d2d.shape, sites, moved_m)
        h_e = draws.effective_height_m if sites is None else draws.effective_height_m[np.arange(x.size)[:, None], sites]
        loss = prop.path_loss_db(np.maximum(d2d, pathloss.MIN_DISTANCE_M), los, cell.bs_height_m, h, cell.carrier_hz, h_e)
        if cell.shadowing:  # an indoor device reads the O2I field to every site; an outdoor one its link's LOS or NLOS field
            inside = self.layout.indoor
            kind = np.where(los, SF_LOS, SF_NLOS)
            kind[inside] = SF_O2I
            shadowing = prop.sigma_sf_db(los, inside[:, None]) * self._continued(x, y, kind, sites, moved_m)
        else:
            shadowing = np.zeros_like(d2d)
        zenith = np.degrees(np.arctan2(d2d, h - cell.bs_height_m))
        array = array_gain_db(zenith, cell.bs_elements, cell.downtilt_deg)
        bearing = np.degrees(np.arctan2(vy, vx))
        relative = bearing[:, :, None] - np.array(multicell.SECTOR_AZIMUTHS_DEG)  # in (-450, 150]: wrapped to (-180, 180]
        relative[relative <= -180.0] += 360.0
        relative[relative <= -180.0] += 360.0
        antenna = (multicell.element_gain_db(zenith[:, :, None], relative) + array[:, :, None]).reshape(x.size, -1)
        coupling = antenna - np.repeat(loss + shadowing + draws.o2i_loss_db[:, None], 3, axis=1)
        return x, y, los, loss, shadowing, antenna, coupling

    def measure_until(self, t_s: float) -> None:
        """Run the association at every measurement instant ``k P <= t_s`` not yet run (``P`` the
        ``measurement_period_s``, by default TS 38.133's 200 ms intra-frequency layer-1
        measurement period without DRX, ``association.L1_PERIOD_S``, the sample rate the layer-3
        filter's coefficient assumes): each reads every sector's coupling gain at its instant
        (RSRP without the fast fading: TS 38.215 5.1.1), filters it (TS 38.331 5.5.3.2), applies
        event A3 with its time to trigger (TS 38.331 5.5.4.4) and logs the handovers at that
        instant. So the association runs on its own clock, not at the rounds' starts: how often a
        device hands over does not depend on how long the rounds are, nor on who reads the
        channel when (the isolated cell has one base station: nothing to measure).

        Every ``FULL_EVERY``-th measurement (each second) reads all 57 sectors; the ones between
        read, for each device, the sectors of its ``CANDIDATE_SITES`` strongest sites at the last
        full one (its serving site among them), the others' filtered values held: a site outside
        a device's three strongest that overtakes them all is found at the next full measurement,
        up to a second late (the cost of a measurement is then about a sixth of a full reading's)."""
        cell = self.system.cell
        if not cell.interference:
            return
        per_second = 1.0 / self.measurement_period_s  # instants k / per_second: whole seconds exact at 200 ms
        while self.measurements / per_second <= t_s:
            t_k = self.measurements / per_second
            full = self.candidates is None or self.measurements % FULL_EVERY == 0
            if full:
                measured = self.l3_filter.read(t_k, self.coupling_db(t_k)[-1])
            else:
                sectors = (3 * self.candidates[:, :, None] + np.arange(3)).reshape(self.candidates.shape[0], -1)
                measured = self.l3_filter.read(t_k, self._links(t_k, self.candidates)[-1], sectors)
            serving = association.strongest(measured, self.serving, cell.handover_margin_db)
            if self.serving is not None:
                if self.trigger is not None:
                    serving = self.trigger.confirm(t_k, self.serving, serving)
                self.handovers.extend(association.handovers(t_k, self.serving, serving))
            self.serving, self.measured_db = serving, measured
            if full:
                site_best = measured.reshape(measured.shape[0], -1, 3).max(axis=2)
                site_best[np.arange(serving.size), serving // 3] = np.inf
                self.candidates = np.argpartition(-site_best, CANDIDATE_SITES - 1, axis=1)[:, :CANDIDATE_SITES]
            self.measurements += 1

    def serving_at(self, t_s: float) -> np.ndarray:
        """Each device's serving sector at ``t_s`` as the association's measurements left it (the
        first measurement's before it has run; an instant before the last measurement: the
        sectors then, the later handovers undone)."""
        if self.serving is None:
            self.measure_until(0.0)
        serving = self.serving.copy()
        for h in reversed(self.handovers):
            if h.time_s <= t_s:
                break
            serving[h.device] = h.source
        return serving

    def _large_scale(self, t_s: float) -> tuple[CellLayout, np.ndarray]:
        cell = self.system.cell
        if not cell.interference:
            return self._isolated(t_s), np.zeros(self.layout.num_devices, dtype=bool)
        serving = self.serving_at(t_s)
        x, y, los, loss, shadowing, antenna, coupling = self.coupling_db(t_s)
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
        layout = CellLayout(x, y, los[rows, site], shadowing[rows, site], loss[rows, site] + self.draws.o2i_loss_db,
                            self.draws.k_los * los[rows, site],
                            bs_gain_db=antenna[rows, sector], downlink_interference_db=downlink, uplink_interference_db=uplink,
                            indoor=self.layout.indoor, height_m=self.layout.height_m, sector=orientation, site=site,
                            interferer_gain_db=self.layout.interferer_gain_db,
                            interferer_coupling_loss_db=self.layout.interferer_coupling_loss_db, draws=self.draws,
                            receiver_gain_db=coupling if self.system.ul_interference == "clock" else None)  # kept only where read
        return layout, out

    def _los(self, x, y, probability, shape, sites=None, d_m=None) -> np.ndarray:
        """Every link's LOS state (devices x sites, or the ``sites``): the cell's fixed state, or
        ``Phi(g) < P_LOS`` with ``g`` the LOS field continued from the drop's draw (``_continued``)."""
        los = self.system.cell.los
        if los != "probabilistic":
            return np.full(shape, los == "los")
        return ndtr(self._continued(x, y, LOS_FIELD, sites, d_m)) < probability()

    def _isolated(self, t_s: float) -> CellLayout:
        cell = self.system.cell
        prop = cell.propagation
        x, y = self.motion.positions(t_s)
        d = np.maximum(np.hypot(x, y), cell.inner_radius_m)
        los = self._los(x, y, lambda: prop.los_probability(d)[:, None], (x.size, 1))[:, 0]  # one site: devices x 1
        g = self._continued(x, y, np.where(los, SF_LOS, SF_NLOS)[:, None])[:, 0]
        shadowing = prop.sigma_sf_db(los) * g if cell.shadowing else np.zeros(x.size)
        loss = prop.path_loss_db(d, los, cell.bs_height_m, cell.ut_height_m, cell.carrier_hz)
        return CellLayout(x, y, los, shadowing, loss, self.draws.k_los * los, draws=self.draws)


def correlation_m(scenario: str) -> np.ndarray:
    """The four fields' correlation distances (LOS state; shadow fading of LOS, NLOS, O2I links)."""
    return np.array([LOS_CORRELATION_M[scenario], *SF_CORRELATION_M[scenario]])


def array_gain_db(zenith_deg, elements: int, downtilt_deg: float) -> np.ndarray:
    """``netsim.radio.multicell.array_gain_db`` in closed form, ``sin^2(M psi/2) / (M sin^2(psi/2))``
    (``M`` at ``psi = 0``): the same gain without summing the elements (in single precision:
    within 1e-4 dB of it outside the nulls)."""
    psi = (np.pi * (np.cos(np.radians(zenith_deg)) - np.cos(np.radians(90.0 + downtilt_deg)))).astype(np.float32)
    half = np.sin(psi / 2)
    tiny = np.abs(half) < 1e-6
    ratio = np.where(tiny, np.float32(elements), np.sin(elements * psi / 2) ** 2 / (elements * np.where(tiny, 1, half) ** 2))
    return 10.0 * np.log10(np.maximum(ratio, 1e-30).astype(float))


@functools.lru_cache(maxsize=8)
def _site_images(isd_m: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every site's seven wrap-around images (``multicell.hex_sites`` shifted by each of
    ``multicell.wrap_shifts``, 7 x 19 x 2, read-only), and their x and y in single precision:
    ``_site_vectors``'s constants, computed once per inter-site distance rather than at each
    measurement instant."""
    images = multicell.hex_sites(isd_m)[None, :, :] + multicell.wrap_shifts(isd_m)[:, None, :]
    images.flags.writeable = False
    images_x32, images_y32 = images[..., 0].astype(np.float32), images[..., 1].astype(np.float32)
    images_x32.flags.writeable = images_y32.flags.writeable = False
    return images, images_x32, images_y32


def _site_vectors(x, y, isd_m: float, sites: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per device and site, the vector from the site's nearest wrap-around image to the device
    (devices x sites; the image picked in single precision, the vector in double); ``sites``
    (devices x m): to those sites only, devices x m (all in double)."""
    images, images_x32, images_y32 = _site_images(isd_m)
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if sites is not None:
        own = images[:, sites]  # 7 x devices x m x 2
        vx, vy = x[:, None] - own[..., 0], y[:, None] - own[..., 1]
        nearest = np.argmin(vx * vx + vy * vy, axis=0)[None]
        return np.take_along_axis(vx, nearest, axis=0)[0], np.take_along_axis(vy, nearest, axis=0)[0]
    vx = x.astype(np.float32)[:, None, None] - images_x32[None]
    vy = y.astype(np.float32)[:, None, None] - images_y32[None]
    vx *= vx
    vy *= vy
    vx += vy
    nearest = np.argmin(vx, axis=1)  # devices x sites: which of the 7 images
    every = np.arange(images.shape[1])
    return x[:, None] - images[nearest, every, 0], y[:, None] - images[nearest, every, 1]
