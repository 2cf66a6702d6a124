"""The cell inside a network: TR 38.901's 19-site, 3-sector hexagonal layout with wrap-around
(Table 7.8-1, the large-scale calibration of Sec. 7.8.1), numpy throughout.

- Sites on a hexagonal grid of inter-site distance ``isd`` (the centre site and two rings, the
  first ring at 30, 90, ..., 330 degrees), each with three sectors pointing at 30, 150 and 270
  degrees: every boresight faces a neighbour site, as in the layout of TR 38.901 Tables 7.2-1 and
  7.8-1 that the calibrated simulators build (ITU-R M.2412's wrap-around figure). Wrap-around: every link runs to the
  nearest of a site's seven images (the layout shifted by ``sqrt(19) isd`` six ways), so every
  device sees the same ring of interferers.
- BS antenna (Table 7.3-1): element pattern ``-min(12 ((theta-90)/65)^2 + 12 (phi/65)^2 -> 30)``
  dB with 8 dBi peak, on a vertical array of ``elements`` elements half a wavelength apart whose
  weights steer it ``downtilt_deg`` below the horizon (Table 7.8-1: ten elements, zenith 102
  degrees, i.e. 12 degrees electrical downtilt); the UT antenna is isotropic.
- Devices (Table 7.8-1): uniform over the layout, at least ``min_distance_m`` from every site,
  ``indoor_fraction`` of them indoors (80%) on floor ``n ~ U{1..N}``, ``N ~ U{4..8}``, at
  ``3 (n - 1) + 1.5`` m, behind the O2I penetration loss of Sec. 7.4.3 (Table 7.4.3-2: low- or
  high-loss building with probability 1/2 each, indoor distance the least of two uniform draws
  on 0..25 m, ``0.5 d_in`` dB inside, a normal spread of 4.4 / 6.5 dB); outdoor devices at 1.5 m.
- Per device and site: the LOS state (Table 7.4.2-1, on the outdoor distance), path loss
  (Table 7.4.1-1; UMa's ``h_E`` drawn per link) and shadowing (independent across sites; Table
  7.4.1-1's LOS / NLOS standard deviation outdoors, Table 7.5-6's 7 dB on an O2I link). Per
  device: its O2I loss (the same to every site). A device is served by the sector of strongest
  coupling gain (antenna gain - path loss - shadowing - O2I loss; RSRP association with 0 dB
  handover margin).

``coupling_loss_db`` and ``geometry_db`` are TR 38.901 Sec. 7.8.1's calibration quantities: the
loss to the serving sector, and the serving power over the sum of every other sector's (equal
powers, no noise, no fast fading).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netsim.radio import pathloss

SECTOR_AZIMUTHS_DEG = (30.0, 150.0, 270.0)
GRID_ROTATION_DEG = 30.0  # the first ring's first site: on the first sector's boresight
ELEMENT_GAIN_DBI = 8.0  # Table 7.3-1 G_E,max
ELEMENT_BEAMWIDTH_DEG = 65.0  # Table 7.3-1 theta_3dB = phi_3dB
ELEMENT_MAX_ATTENUATION_DB = 30.0  # Table 7.3-1 SLA_V = A_max
INDOOR_DISTANCE_MAX_M = 25.0  # Table 7.4.3-2 note: d_2D-in = min of two uniform draws on 0..25 m
LOW_LOSS_STD_DB, HIGH_LOSS_STD_DB = 4.4, 6.5  # Table 7.4.3-2 sigma_P
PS_SITE = 0  # the parameter server's site: the centre
SITES = 19
BATCH = 5000  # devices dropped at once while looking for the centre site's (bounds memory: x 19 sites x 7 images)


def hex_sites(isd_m: float) -> np.ndarray:
    """(19, 2) site positions (m): the centre, then rings 1 and 2 of the hexagonal grid."""
    axial = [(q, r) for q in range(-2, 3) for r in range(-2, 3) if abs(q + r) <= 2]
    axial.sort(key=lambda a: (max(abs(a[0]), abs(a[1]), abs(a[0] + a[1])), a))
    q, r = np.array(axial, dtype=float).T
    return _rotated(np.stack([isd_m * (q + r / 2.0), isd_m * r * np.sqrt(3.0) / 2.0], axis=1))


def _rotated(points: np.ndarray) -> np.ndarray:
    """``points`` (n, 2) turned by ``GRID_ROTATION_DEG`` about the origin."""
    a = np.radians(GRID_ROTATION_DEG)
    return points @ np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])


def wrap_shifts(isd_m: float) -> np.ndarray:
    """(7, 2): no shift and the six translations of the 19-site cluster (axial (5, -2) rotated)."""
    angles = np.arctan2(-2.0 * np.sqrt(3.0) / 2.0, 5.0 - 1.0) + np.arange(6) * np.pi / 3.0
    shifts = np.sqrt(19.0) * isd_m * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return _rotated(np.vstack([np.zeros((1, 2)), shifts]))


def inside_hexagon(dx, dy, isd_m: float) -> np.ndarray:
    """Whether offsets from a site lie in its hexagon (apothem ``isd / 2``, towards each neighbour)."""
    half = isd_m / 2.0
    inside = True
    for k in range(3):
        a = np.radians(GRID_ROTATION_DEG + 60.0 * k)
        inside = inside & (np.abs(dx * np.cos(a) + dy * np.sin(a)) <= half)
    return inside


def element_gain_db(zenith_deg, azimuth_deg) -> np.ndarray:
    """Table 7.3-1: ``G_max - min(-(A_V + A_H), A_max)`` dBi, angles in the sector's frame."""
    vertical = np.minimum(12.0 * ((zenith_deg - 90.0) / ELEMENT_BEAMWIDTH_DEG) ** 2, ELEMENT_MAX_ATTENUATION_DB)
    horizontal = np.minimum(12.0 * (azimuth_deg / ELEMENT_BEAMWIDTH_DEG) ** 2, ELEMENT_MAX_ATTENUATION_DB)
    return ELEMENT_GAIN_DBI - np.minimum(vertical + horizontal, ELEMENT_MAX_ATTENUATION_DB)


def array_gain_db(zenith_deg, elements: int, downtilt_deg: float) -> np.ndarray:
    """The vertical array factor ``|sum_m w_m v_m|^2`` in dB, ``M`` elements ``lambda/2`` apart,
    ``w_m = exp(-j pi m cos(theta_tilt)) / sqrt(M)`` (TR 36.897 / 38.901 Sec. 7.3), ``theta_tilt = 90 +
    downtilt``: ``10 log10 M`` at the tilt, ``sin^2(M psi/2) / (M sin^2(psi/2))`` elsewhere."""
    psi = np.pi * (np.cos(np.radians(zenith_deg)) - np.cos(np.radians(90.0 + downtilt_deg)))
    m = np.arange(elements)
    field = np.exp(1j * psi[..., None] * m).sum(axis=-1) / np.sqrt(elements)
    return 10.0 * np.log10(np.maximum(np.abs(field) ** 2, 1e-30))


@dataclass(frozen=True)
class Drop:
    """Devices dropped over the layout: per device its position (m, centre site at the origin),
    height, indoor state and O2I loss; per device and site the nearest image's 2D distance, LOS
    state, path loss and shadowing; per device and sector (site-major, 57) the antenna gain and
    the coupling gain ``antenna - path loss - shadowing - O2I`` (dB)."""

    x_m: np.ndarray
    y_m: np.ndarray
    height_m: np.ndarray
    indoor: np.ndarray
    o2i_loss_db: np.ndarray
    distance_m: np.ndarray  # devices x sites
    los: np.ndarray  # devices x sites
    path_loss_db: np.ndarray  # devices x sites
    shadowing_db: np.ndarray  # devices x sites
    antenna_gain_db: np.ndarray  # devices x sectors
    coupling_gain_db: np.ndarray  # devices x sectors
    # the draws a channel in time continues from (netsim.dynamics.motion): LOS uniform, unit shadowing, h_E, indoor distance
    los_uniform: np.ndarray  # devices x sites: LOS when below P_LOS
    shadowing_z: np.ndarray  # devices x sites: shadowing_db / sigma_SF
    effective_height_m: np.ndarray  # devices x sites (UMa's h_E; 1 m elsewhere)
    indoor_distance_m: np.ndarray  # devices (0 outdoors)

    @property
    def serving(self) -> np.ndarray:
        """Each device's serving sector (strongest coupling gain)."""
        return np.argmax(self.coupling_gain_db, axis=1)

    def take(self, keep) -> "Drop":
        return Drop(*(getattr(self, f)[keep] for f in self.__dataclass_fields__))

    @property
    def coupling_loss_db(self) -> np.ndarray:
        """TR 38.901 Sec. 7.8.1: the loss to the serving sector (antennas and shadowing included)."""
        return -self.coupling_gain_db.max(axis=1)

    @property
    def geometry_db(self) -> np.ndarray:
        """TR 38.901 Sec. 7.8.1: serving power over the sum of every other sector's (equal powers)."""
        gain = 10.0 ** (self.coupling_gain_db / 10.0)
        best = gain.max(axis=1)
        return 10.0 * np.log10(best / (gain.sum(axis=1) - best))


def drop(cell, count: int, rng: np.random.Generator) -> Drop:
    """``count`` devices uniform over the 19 sites' hexagons of ``cell`` (a ``netsim.radio.cell.Cell``
    with ``interference`` on), with every link's large-scale channel (vectorized)."""
    isd = cell.inter_site_distance_m
    sites = hex_sites(isd)
    prop = cell.propagation
    # positions: a site at random, a point in its hexagon (rejection from the bounding box), none
    # closer than min_distance to its site (the nearest site of any point is its hexagon's)
    xs, ys = np.empty(0), np.empty(0)
    while xs.size < count:
        n = 2 * (count - xs.size) + 16
        dx = rng.uniform(-isd / 2.0, isd / 2.0, n)
        dy = rng.uniform(-isd / np.sqrt(3.0), isd / np.sqrt(3.0), n)
        site = rng.integers(0, sites.shape[0], n)
        ok = inside_hexagon(dx, dy, isd) & (np.hypot(dx, dy) >= cell.inner_radius_m)
        xs = np.concatenate([xs, (sites[site, 0] + dx)[ok]])
        ys = np.concatenate([ys, (sites[site, 1] + dy)[ok]])
    x, y = xs[:count], ys[:count]
    # indoor state, floor and height, O2I loss (one per device: the same building to every site)
    indoor = rng.random(count) < cell.indoor_fraction
    floors = rng.integers(4, 9, count)
    floor = np.floor(rng.random(count) * floors).astype(int) + 1
    height = np.where(indoor, 3.0 * (floor - 1) + 1.5, cell.ut_height_m)
    d_in = np.minimum(rng.uniform(0.0, INDOOR_DISTANCE_MAX_M, count), rng.uniform(0.0, INDOOR_DISTANCE_MAX_M, count))
    low = rng.random(count) < cell.o2i_low_loss_fraction
    spread = rng.standard_normal(count)
    o2i = np.where(indoor, o2i_loss_db(cell.carrier_hz, low, d_in, spread), 0.0)
    d_in = np.where(indoor, d_in, 0.0)
    # every link to the nearest image of every site
    images = sites[None, :, :] + wrap_shifts(isd)[:, None, :]  # (7, 19, 2)
    vx = x[:, None, None] - images[None, :, :, 0]
    vy = y[:, None, None] - images[None, :, :, 1]
    d_img = np.hypot(vx, vy)
    nearest = np.argmin(d_img, axis=1)[:, None, :]
    vx = np.take_along_axis(vx, nearest, axis=1)[:, 0, :]
    vy = np.take_along_axis(vy, nearest, axis=1)[:, 0, :]
    d2d = np.hypot(vx, vy)  # devices x sites
    d_out = np.maximum(d2d - d_in[:, None], 0.0)
    h = height[:, None]
    los_uniform = rng.random(d2d.shape)
    los = los_uniform < prop.los_probability(d_out, h)
    if cell.scenario == "uma":
        h_e = pathloss.uma_effective_height_m(rng, d2d, h)
    else:
        h_e = np.ones_like(d2d)
    loss = prop.path_loss_db(np.maximum(d2d, pathloss.MIN_DISTANCE_M), los, cell.bs_height_m, h, cell.carrier_hz, h_e)
    sigma_sf = prop.sigma_sf_db(los, indoor[:, None])  # an indoor device's links are O2I (Table 7.5-6: 7 dB)
    shadowing_z = rng.standard_normal(d2d.shape) if cell.shadowing else np.zeros(d2d.shape)
    shadowing = shadowing_z * sigma_sf
    # antenna gain of each sector towards the device
    zenith = np.degrees(np.arctan2(d2d, h - cell.bs_height_m))  # from the zenith: 90 at the horizon, > 90 below it
    array = array_gain_db(zenith, cell.bs_elements, cell.downtilt_deg)
    bearing = np.degrees(np.arctan2(vy, vx))
    relative = (bearing[:, :, None] - np.array(SECTOR_AZIMUTHS_DEG) + 180.0) % 360.0 - 180.0
    antenna = element_gain_db(zenith[:, :, None], relative) + array[:, :, None]  # devices x sites x 3
    coupling = antenna - (loss + shadowing + o2i[:, None])[:, :, None]
    n_sectors = 3 * sites.shape[0]
    return Drop(x, y, height, indoor, o2i, d2d, los, loss, shadowing, antenna.reshape(count, n_sectors),
                coupling.reshape(count, n_sectors), los_uniform, shadowing_z, h_e, d_in)


def o2i_loss_db(carrier_hz: float, low_loss, indoor_distance_m, spread) -> np.ndarray:
    """TR 38.901 Sec. 7.4.3, Tables 7.4.3-1 and 7.4.3-2: ``PL_tw + 0.5 d_in + N(0, sigma_P)``,
    ``PL_tw = 5 - 10 log10(0.3 10^(-L_glass/10) + 0.7 10^(-L_concrete/10))`` (low loss) or
    ``5 - 10 log10(0.7 10^(-L_IRRglass/10) + 0.3 10^(-L_concrete/10))`` (high loss);
    ``L_glass = 2 + 0.2 f``, ``L_IRRglass = 23 + 0.3 f``, ``L_concrete = 5 + 4 f`` (f in GHz)."""
    f = carrier_hz / 1e9
    glass, irr_glass, concrete = 2.0 + 0.2 * f, 23.0 + 0.3 * f, 5.0 + 4.0 * f
    low_wall = 5.0 - 10.0 * np.log10(0.3 * 10 ** (-glass / 10) + 0.7 * 10 ** (-concrete / 10))
    high_wall = 5.0 - 10.0 * np.log10(0.7 * 10 ** (-irr_glass / 10) + 0.3 * 10 ** (-concrete / 10))
    wall = np.where(low_loss, low_wall, high_wall)
    sigma = np.where(low_loss, LOW_LOSS_STD_DB, HIGH_LOSS_STD_DB)
    return wall + 0.5 * np.asarray(indoor_distance_m) + sigma * np.asarray(spread)


@dataclass(frozen=True)
class Served:
    """The parameter server's devices and the interference they see (dB gains, the load applied):
    ``downlink_interference_db``: ``10 log10`` of the sum of every other sector's coupling gain
    to the device (times the load); ``uplink_interference_db``: of the sum of the interfering
    devices' coupling gains to the device's serving sector (one device per sector of the other
    18 sites, times the load). Multiply by the transmit power (W) to get the interference power.
    ``interferer_gain_db``: each interfering device's coupling gain to the centre site's three
    sectors (54 x 3, no load), ``interferer_coupling_loss_db``: its loss to its own serving sector
    (what sets its power under uplink power control, ``netsim.radio.physical.pusch_power_dbm``)."""

    devices: Drop
    sector: np.ndarray
    downlink_interference_db: np.ndarray
    uplink_interference_db: np.ndarray
    interferer_gain_db: np.ndarray
    interferer_coupling_loss_db: np.ndarray


def serve(cell, count: int, rng: np.random.Generator) -> Served:
    """``count`` devices served by the centre site (dropped over the layout, kept when the
    strongest sector is one of the centre site's three), and the interference they see.

    Load model: every other sector transmits all the time on the downlink (full buffer, as in
    TR 38.901 Sec. 7.8's calibration and ITU-R M.2412's evaluations), each of the other sites'
    sectors has one device transmitting on the uplink, at the power its own link sets (full power,
    or its open-loop power control from its own coupling loss); ``interference_load``
    scales both (the fraction of resources the neighbours use)."""
    kept = []
    got = 0
    while got < count:
        batch = drop(cell, min(max(64, 25 * (count - got)), BATCH), rng)
        mine = batch.serving // 3 == PS_SITE
        kept.append(batch.take(mine))
        got += int(mine.sum())
    devices = _concat(kept).take(np.arange(count))
    # one interfering device per sector of the other sites: the first one each sector serves
    sectors = 3 * SITES
    first = np.full(sectors, -1)
    pool = []
    offset = 0
    while (first[3:] < 0).any():
        batch = drop(cell, 40 * sectors, rng)
        serving = batch.serving
        for s in np.flatnonzero(first < 0):
            hit = np.flatnonzero(serving == s)
            if hit.size:
                first[s] = offset + hit[0]
        pool.append(batch)
        offset += batch.x_m.size
    interferers = _concat(pool).take(first[3:])
    sector = devices.serving
    load = cell.interference_load
    gain = 10.0 ** (devices.coupling_gain_db / 10.0)
    own = gain[np.arange(count), sector]
    downlink = load * (gain.sum(axis=1) - own)
    # the interferers' coupling gain to the centre site's three sectors (columns 0..2)
    to_centre = 10.0 ** (interferers.coupling_gain_db[:, :3] / 10.0)
    uplink = load * to_centre.sum(axis=0)[sector]
    with np.errstate(divide="ignore"):
        return Served(devices, sector, 10.0 * np.log10(downlink), 10.0 * np.log10(uplink),
                      interferers.coupling_gain_db[:, :3], interferers.coupling_loss_db)


def _concat(drops: list[Drop]) -> Drop:
    return Drop(*(np.concatenate([getattr(d, f) for d in drops]) for f in Drop.__dataclass_fields__))


def hexagon(center, isd_m: float) -> np.ndarray:
    """(7, 2): the corners (closed) of a site's hexagon, apothem ``isd / 2`` towards each neighbour."""
    angles = np.radians(GRID_ROTATION_DEG + 30.0 + 60.0 * np.arange(7))
    return np.asarray(center) + isd_m / np.sqrt(3.0) * np.stack([np.cos(angles), np.sin(angles)], axis=1)


def site_outlines(isd_m: float) -> dict:
    """What a map of the layout draws: the hexagons of the centre site and its first ring (the
    centre's first), the centre site's sector boundaries (half-way between two boresights,
    towards a neighbour, from the site to its hexagon's side) and the first ring's sites."""
    sites = hex_sites(isd_m)[:7]
    edges = [((0.0, 0.0), (isd_m / 2.0 * np.cos(np.radians(azimuth + 60.0)), isd_m / 2.0 * np.sin(np.radians(azimuth + 60.0))))
             for azimuth in SECTOR_AZIMUTHS_DEG]
    return {"hexagons": [hexagon(site, isd_m) for site in sites], "sector_edges": edges, "neighbour_sites": sites[1:]}
