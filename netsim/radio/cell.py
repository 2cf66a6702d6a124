"""A cell: one base station at the origin and its devices, placed by a seeded layout, with
their large-scale channel (TR 38.901 path loss, LOS state, log-normal shadowing).

Devices do not move, so the large-scale channel is drawn once per layout; small-scale fading
is redrawn every round by the physical system (``netsim.radio.physical``). With ``speed_kmh`` they
move from where the layout put them (``netsim.dynamics``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from contract.setting import Needs, check_declared, option
from netsim.radio import pathloss

LOS_MODES = ("los", "nlos", "probabilistic")


# What a radio parameter needs to have any effect (its ``requires``; a parameter given without it is
# refused: ``scenarios.definitions.cells.cell_parameters``): the handover and coverage parameters act on
# a moving device's association to the 19-site layout (``netsim.dynamics.motion``), read only on a
# moving cell with interference on (static: the association is drawn once; isolated: one site).
MOVING = Needs(lambda speed_kmh: speed_kmh != 0, "above 0 (a moving cell)")
LAYOUT = Needs(lambda interference: interference is True, "on (the 19-site layout)")
IN_LAYOUT = {"speed_kmh": MOVING, "interference": LAYOUT}


@dataclass(frozen=True)
class Cell:
    """Geometry and propagation of one cell.

    Devices are uniform over the area of the annulus ``inner_radius_m <= d2D <= outer_radius_m``
    around the base station, or at the given ``distances_m`` (uniform angles). ``los``: every
    link LOS, every link NLOS, or each device's state drawn from TR 38.901 Table 7.4.2-1.
    ``shadowing``: log-normal with the table's ``sigma_SF`` (per device, fixed). A LOS device's
    Ricean K-factor is drawn once, ``K_dB ~ N(mu_K, sigma_K)`` (Table 7.5-6; ``k_factor_db`` in
    place of ``mu_K`` where given); NLOS devices have 0.
    """

    scenario: str = "umi"
    carrier_hz: float = option(3.5e9, "carrier frequency (TR 38.901 path loss holds from 0.5 to 100 GHz)", low=5e8, high=1e11)
    bs_height_m: float = option(10.0, "base station height (above the effective environment height, 1 m)", low=1.0, low_open=True, high=1e3)
    ut_height_m: float = option(1.5, "device height (isolated cell)", low=1.0, high=1e3)
    inner_radius_m: float = option(10.0, "devices' smallest distance (d2D <= 5 km)", low=1.0, high=5e3)
    outer_radius_m: float = option(100.0, "devices' largest distance (isolated cell)", low=1.0, high=5e3)
    distances_m: tuple[float, ...] | None = None
    los: str = "probabilistic"
    shadowing: bool = True
    interference: bool = False
    inter_site_distance_m: float = option(200.0, "19-site layout's inter-site distance (wrap-around links reach 3 ISD)",
                                             low=10.0, high=5e3 / 3)
    indoor_fraction: float = option(0.8, "share of devices indoors (19-site layout)", low=0.0, high=1.0)
    o2i_low_loss_fraction: float = option(0.5, "share of indoor devices behind low-loss walls", low=0.0, high=1.0)
    bs_elements: int = option(10, "vertical array elements of each sector antenna", low=1, high=64)
    downtilt_deg: float = option(12.0, "electrical downtilt of the sector antennas", low=0.0, high=90.0)
    interference_load: float = option(1.0, "share of the time the other sectors transmit", low=0.0, high=1.0)
    k_factor_db: float | None = option(None, "mean Ricean K-factor of LOS links (none: TR 38.901 Table 7.5-6's 9 dB)",
                                          low=-50.0, high=50.0, omit_default=True)
    speed_kmh: float | Literal["38.901"] = option(
        0.0, "devices' speed (0: static, fading i.i.d. per round; above 0 the channel moves in time: netsim.dynamics; "
             "38.901: TR 38.901 Table 7.8-1's, 3 km/h indoors and 30 km/h outdoors, 19-site layout)",
        low=0.0, high=500.0, omit_default=True)
    handover_margin_db: float = option(0.0, "a moving device's handover offset to a stronger sector (TS 38.331 A3 event)",
                                       low=0.0, high=30.0, omit_default=True, requires=IN_LAYOUT)
    handover_ttt_s: float = option(0.0, "how long the A3 condition must hold before a handover (TS 38.331 timeToTrigger)",
                                   low=0.0, high=5.12, omit_default=True, requires=IN_LAYOUT)
    handover_filter_k: int = option(4, "layer-3 filter coefficient k of the handover measurements, a = 1/2^(k/4) per 200 ms "
                                       "(TS 38.331 Sec. 5.5.3.2 filterCoefficient, default fc4; 0: unfiltered)",
                                    low=0, high=19, omit_default=True, requires=IN_LAYOUT)
    coverage: Literal["network", "site"] = option(
        "network", "which sites reach the parameter server for a moving device: every site (the server in the core network) "
                   "or only the centre site (served by another, a device is out of coverage: dropped)", omit_default=True, requires=IN_LAYOUT)

    def __post_init__(self) -> None:
        """The declared bounds (``option``), then what no single field's bounds say."""
        check_declared(self)
        if self.scenario not in pathloss.SCENARIOS:
            raise ValueError(f"unknown propagation scenario {self.scenario!r}; choose from {', '.join(pathloss.SCENARIOS)}")
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
        if self.los not in LOS_MODES:
            raise ValueError(f"unknown LOS mode {self.los!r}; choose from {', '.join(LOS_MODES)}")
        if self.interference:
            self._check_network()
        elif self.speed_kmh == "38.901":
            raise ValueError("speed_kmh=38.901 sets speeds by the devices' indoor states, which the 19-site layout draws; "
                             "give interference=on or a speed in km/h")

    @property
    def moving(self) -> bool:
        """Whether the devices move (the channel lives in time: ``netsim.dynamics.motion``)."""
        return self.speed_kmh != 0.0

    def _check_network(self) -> None:
        """The 19-site layout's own limits (``netsim.radio.multicell``)."""
        if self.distances_m is not None:
            raise ValueError("distances_m places devices in the isolated cell; give interference=off with it")
        if self.los != "probabilistic" and not self.moving:
            raise ValueError("the 19-site layout draws every link's LOS state; give interference=off for los=los or los=nlos "
                             "(or a speed: a moving device's links all LOS or all NLOS)")
        if not 2 * self.inner_radius_m < self.inter_site_distance_m:
            raise ValueError(f"inter_site_distance_m must exceed twice the minimum distance {self.inner_radius_m:g} m, "
                             f"got {self.inter_site_distance_m:g}")
        if 3.0 * self.inter_site_distance_m > pathloss.MAX_DISTANCE_M:
            raise ValueError(f"inter_site_distance_m must be at most {pathloss.MAX_DISTANCE_M / 3:g} m (wrap-around links "
                             f"reach 3 ISD; TR 38.901 path loss holds to 5 km), got {self.inter_site_distance_m:g}")
        if self.ut_height_m != 1.5:
            raise ValueError("the 19-site layout puts outdoor devices at 1.5 m and indoor ones on their floors; "
                             "ut_height_m applies with interference=off")

    @property
    def propagation(self) -> pathloss.PropagationScenario:
        return pathloss.SCENARIOS[self.scenario]

    @property
    def k_factor_mean_db(self) -> float:
        """``mu_K`` of the LOS links' K-factor: ``k_factor_db``, else Table 7.5-6's."""
        return self.propagation.k_factor_mu_db if self.k_factor_db is None else self.k_factor_db

    def place(self, num_devices: int, rng: np.random.Generator) -> "CellLayout":
        """Draw the layout: positions, LOS states, shadowing (``interference`` on: the centre
        site's devices in the 19-site network, ``place_in_network``).

        Radius, angle, LOS, shadowing and K-factor draws are always all taken, in that order, so
        switching LOS mode or shadowing off keeps the positions (common random numbers).
        """
        if num_devices < 1:
            raise ValueError(f"a cell needs >= 1 device, got {num_devices}")
        if self.interference:
            return self.place_in_network(num_devices, rng)
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
        k_los = 10.0 ** ((self.k_factor_mean_db + prop.k_factor_sigma_db * z_k) / 10.0)
        k_factor = np.where(los, k_los, 0.0)
        z_shadow = z_shadow if self.shadowing else np.zeros(num_devices)
        draws = LinkDraws(u_los[:, None], z_shadow[:, None], np.ones((num_devices, 1)), np.zeros(num_devices), np.zeros(num_devices),
                          k_los)
        return CellLayout(distance * np.cos(angle), distance * np.sin(angle), los, shadowing, loss, k_factor, draws=draws)

    def place_in_network(self, num_devices: int, rng: np.random.Generator) -> "CellLayout":
        """The centre site's devices of the 19-site layout (``netsim.radio.multicell.serve``): the
        serving link's LOS state, shadowing and path loss (O2I loss included), the serving
        sector's antenna gain, a LOS device's K-factor, and the interference gains."""
        from netsim.radio import multicell

        served = multicell.serve(self, num_devices, rng)
        d, site, rows = served.devices, served.sector // 3, np.arange(num_devices)
        los = d.los[rows, site]
        prop = self.propagation
        z_k = rng.standard_normal(num_devices)
        # Table 7.5-6 gives the O2I links no K-factor: an indoor device's link is Rayleigh even when LOS
        k_los = np.where(d.indoor, 0.0, 10.0 ** ((self.k_factor_mean_db + prop.k_factor_sigma_db * z_k) / 10.0))
        k_factor = np.where(los, k_los, 0.0)
        draws = LinkDraws(d.los_uniform, d.shadowing_z, d.effective_height_m, d.indoor_distance_m, d.o2i_loss_db, k_los)
        return CellLayout(d.x_m, d.y_m, los, d.shadowing_db[rows, site], d.path_loss_db[rows, site] + d.o2i_loss_db, k_factor,
                          bs_gain_db=d.antenna_gain_db[rows, served.sector],
                          downlink_interference_db=served.downlink_interference_db,
                          uplink_interference_db=served.uplink_interference_db, indoor=d.indoor, height_m=d.height_m,
                          sector=served.sector, interferer_gain_db=served.interferer_gain_db,
                          interferer_coupling_loss_db=served.interferer_coupling_loss_db, draws=draws,
                          receiver_gain_db=d.coupling_gain_db)


@dataclass(frozen=True, eq=False)
class LinkDraws:
    """What the drop drew for each device and each site's link (devices x sites; the isolated
    cell: one site), kept so that a channel in time starts from the very channel the static
    cell has and continues it (``netsim.dynamics.motion``): the uniform whose comparison with
    ``P_LOS`` set the LOS state (TR 38.901 Table 7.4.2-1), the unit normal that times ``sigma_SF``
    is the shadow fading, UMa's effective environment height ``h_E`` (Table 7.4.1-1 note 1),
    and per device the indoor distance, the O2I loss (Sec. 7.4.3) and the Ricean K-factor its
    serving link has while LOS (Table 7.5-6; 0 indoors: the O2I links have none)."""

    los_uniform: np.ndarray
    shadowing_z: np.ndarray
    effective_height_m: np.ndarray
    indoor_distance_m: np.ndarray
    o2i_loss_db: np.ndarray
    k_los: np.ndarray


@dataclass(frozen=True, eq=False)
class CellLayout:
    """Positions (m, base station at the origin) and the large-scale channel of each device;
    ``k_factor``: its Ricean K-factor (linear; 0 for NLOS; None: all 0). In the 19-site network
    also: ``bs_gain_db``, the serving sector's antenna gain towards it (None: the system's
    constant gain), ``path_loss_db`` with the O2I loss in it, the interference gains
    (``netsim.radio.multicell.Served``; None: no interference), its indoor state, height and sector, and
    the uplink interferers' gains to the centre sectors and losses to their own. ``sector`` is the
    serving sector's orientation (0..2); ``site`` the serving site (TR 38.901's 19, the centre
    0; None: every device the centre's, as a static drop serves them): a moving device served by
    another site's sector (``Cell.coverage`` ``network``) has that site's."""

    x_m: np.ndarray
    y_m: np.ndarray
    los: np.ndarray
    shadowing_db: np.ndarray
    path_loss_db: np.ndarray
    k_factor: np.ndarray | None = None
    bs_gain_db: np.ndarray | None = None
    downlink_interference_db: np.ndarray | None = None
    uplink_interference_db: np.ndarray | None = None
    indoor: np.ndarray | None = None
    height_m: np.ndarray | None = None
    sector: np.ndarray | None = None
    site: np.ndarray | None = None
    interferer_gain_db: np.ndarray | None = None
    interferer_coupling_loss_db: np.ndarray | None = None
    draws: LinkDraws | None = None  # the drop's per-link draws (a layout the cell placed), which a channel in time continues
    # devices x 57 sectors (site-major, ``3 site + orientation``: the uplink receivers): the coupling gain of each device to
    # each sector, its antenna gain included (``netsim.radio.multicell.Drop.coupling_gain_db``, a moving cell's of the instant
    # under ``ul_interference=clock``; None: no network): what ``ul_interference=clock`` reads (``PhysicalNetwork.receiver_gain``)
    receiver_gain_db: np.ndarray | None = None

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
