"""Physical network presets (cells with their radio links and device CPUs), selectable by name
like the normalized systems, with every parameter overridable (``--radio KEY=VALUE``).

Sources of the numbers:
- [38.901] 3GPP TR 38.901 V16.1.0: path loss Table 7.4.1-1, LOS probability Table 7.4.2-1,
  LOS K-factor Table 7.5-6 (mean 9 dB; std 5 dB UMi, 3.5 dB UMa), BS antenna element gain
  Table 7.3-1 (8 dBi), calibration parameters Table 7.8-1 (BS heights 10 m UMi / 25 m UMa,
  inter-site distances 200 m / 500 m, minimum BS-UT distances 10 m / 35 m; BS power at 6 GHz
  and below with 20 MHz: 44 dBm UMi, 49 dBm UMa; UT 1.5 m high, isotropic 0 dBi antenna,
  noise figure 9 dB).
- [38.104] 3GPP TS 38.104 Table 5.2-1: NR band n78, 3300-3800 MHz, TDD (the 3.5 GHz
  carrier); band n1, uplink 1920-1980 MHz, downlink 2110-2170 MHz, FDD.
- [38.101] 3GPP TS 38.101-1 Table 6.2.1-1: UE power class 3, 23 dBm; Table 5.3.2-1: a 20 MHz
  channel at 30 kHz subcarrier spacing holds 51 resource blocks (18.36 MHz occupied).
- [38.306] 3GPP TS 38.306 clause 4.1.2 (the maximum data rate): overhead OH 0.14 downlink and
  0.08 uplink in FR1 (control, reference signals, guard), the share of the resource elements
  not carrying data.
- [M.2412] ITU-R M.2412-0, Table 8-2 evaluation parameters: BS noise figure 5 dB.
- [38.214] 3GPP TS 38.214 Table 5.2.2.1-2 (4-bit CQI table 1): highest spectral efficiency
  5.5547 bit/s/Hz (CQI 15, 64QAM 948/1024) as the rate cap; lowest 0.1523 bit/s/Hz (CQI 1) as
  the outage floor (its SNR ``gap (2^0.1523 - 1)``: -9.53 dB with no gap).
- [Yang21] Z. Yang et al., "Energy efficient federated learning over wireless communication
  networks", IEEE TWC 20(3), 2021, simulation settings: kappa = 1e-28, 1-3 x 1e4 CPU cycles
  per sample (2e4 here).
- [M.2412] also: full-buffer traffic in its evaluations (the interference load of 1).
- [38.213] 3GPP TS 38.213 clause 7.1.1: open-loop PUSCH power
  ``min(P_CMAX, P0 + 10 log10(2^mu M_RB) + alpha PL)``, PL the measured coupling loss.
- [PC] the UE power control of ITU-R WP 5D's IMT macro characteristics for the WRC-23 sharing
  studies (P0_PUSCH -92.2 dBm per 180 kHz resource block, alpha 0.8, P_CMAX 23 dBm; read in a
  public sharing-study configuration, the WP 5D table itself not at hand), with Rec. ITU-R
  M.2101-0 Sec. 4.1's formula. The sharing simulator SIMULATOR-WG/SHARC (M.2101 power control)
  defaults to -95 dBm with alpha 1, full compensation: ``--radio p0_dbm_per_prb=-95 --radio alpha=1``.
The cell sits in TR 38.901's 19-site, 3-sector layout with wrap-around (Sec. 7.8.1, Table 7.8-1;
``netsim.radio.multicell``): ISD 200 m UMi / 500 m UMa, the sector antenna of Table 7.3-1 on a
10-element vertical array tilted 12 degrees, 80% of the devices indoors behind the O2I loss of
7.4.3, the other 56 sectors interfering at full power on the downlink and one device per sector
of the other sites on the uplink, each at the power its own open-loop power control sets
([38.213], [PC]; ``ul_power_control=off``: every device at the full 23 dBm). ``interference=off`` gives the isolated cell
(devices in the annulus ``inner_radius_m..outer_radius_m``, outdoors).
The project's own conventions (no table gives them): in the isolated cell the BS antenna gain
is one element's 8 dBi in every direction (no sectors, no array gain, no tilt pattern); the TDD pattern DDDSU
with a 10:2:2 special slot (a common 3.5 GHz choice); Ricean fading over 8 independent
subbands (docs/physical-layer.md argues it); an SNR gap of 0 dB (the Shannon bound); a 1 GHz
device CPU; reliable devices (no extra compute delay) and no receive power unless set. The FDD
preset computes path loss at the downlink carrier for both directions.

The link layer (issue 58; docs/physical-layer.md says why): ``link_abstraction=nr-harq``, each TDMA
upload and each static-cell stream through NR's MCS, transport block, BLER and HARQ ([38.214];
``netsim.radio.harq_uplink``, ``harq_downlink``); ``ul_allocation=power-limit``, each device's TDMA
grant at its power headroom limit ([38.213] 7.1.1, TS 38.321 5.4.6) in DFT-s-OFDM sizes, not the
``headroom`` policy's widest grant at P_CMAX that hogs the band; ``ue_energy=slots``, [38.840]'s
states where the UE is (a TDD transfer's other slots, a grant wait with data pending; under FDD
the grant wait alone, which ``uma-2.1ghz``'s TDMA uploads have). They keep ``uplink_access=tdma``
(each upload drawn; FDMA and PF charge HARQ at its expected value on their shares) and
``ul_interference=full-buffer`` (the calibration setting). The CQI cap and floor stay: the floor is outage under nr-harq too (below CQI 1 on the
``nr`` curve, besides MCS 0 missing 10% BLER after four transmissions); the cap is the MCS tables'
top as well, so it binds only under ``shannon``. ``--radio link_abstraction=shannon --radio
ul_allocation=headroom --radio ue_energy=airtime`` gives the presets' link layer before the flip.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from contract.setting import field_setting, needs_words, without_effect
from netsim.radio.cell import Cell
from netsim.radio.physical import LinkBudget, PhysicalSystem
from scenarios.errors import UsageError

CQI1_BPS_PER_HZ = 0.1523  # [38.214] CQI 1
CQI15_BPS_PER_HZ = 5.5547  # [38.214] CQI 15
P0_DBM_PER_PRB, PC_ALPHA = -92.2, 0.8  # [PC] P0_PUSCH per 180 kHz resource block, path-loss compensation

# The radio parameters are declared once, as the fields of ``netsim.radio.cell.Cell``,
# ``netsim.radio.physical.PhysicalSystem`` and its ``LinkBudget`` each way (``contract.setting.option``:
# kind, range, doc); here their flat names (a link's fields named by their end of the link) and ranges.
# The upper bounds are far beyond any real cell, and low enough that an airtime (bits over a
# rate of at most 100 bit/s/Hz over 10 GHz), a power times an airtime and kappa cycles f^2 stay
# far from overflow. The lower bounds, the same way from below: every divisor (a bandwidth, a CPU
# clock, the outage floor's rate) and every quantity a logarithm takes (a power, a distance, a
# carrier) is kept far from zero. At the smallest values a model of 10^8 bits at the outage floor
# (1 kHz x 10^-3 bit/s/Hz) takes 10^8 s, and an update of 10^5 samples of 2 x 10^4 cycles at 1 kHz
# 2 x 10^6 s: both below the 10^9 s (MAX_COMPUTE_TIME) a round may add to the clock.
# ``PhysicalSystem.check_compute`` checks each run's own updates against it. What a deep fade
# still makes infinite (outage off) stops the run as diverged.
LINKS = {  # PhysicalSystem's link -> LinkBudget field -> flat parameter name
    "downlink": {"bandwidth_hz": "downlink_bandwidth_hz", "tx_power_w": "bs_power_w", "noise_figure_db": "ue_noise_figure_db"},
    "uplink": {"bandwidth_hz": "uplink_bandwidth_hz", "tx_power_w": "ue_power_w", "noise_figure_db": "bs_noise_figure_db"},
}
SYSTEM_ONLY = ("cell", "mode", "deadline", *LINKS)  # PhysicalSystem's fields that are not radio parameters


def _radio_fields() -> dict[str, tuple[str | None, dataclasses.Field]]:
    """Every radio parameter: flat name -> (its link, or None, and its declared field)."""
    found = {f.name: (None, f) for f in dataclasses.fields(Cell)}
    found.update({f.name: (None, f) for f in dataclasses.fields(PhysicalSystem) if f.name not in SYSTEM_ONLY})
    found.update({name: (link, f) for link, names in LINKS.items() for f in dataclasses.fields(LinkBudget) for name in [names[f.name]]})
    return found


RADIO_FIELDS = _radio_fields()
CELL_FIELDS = {f.name for f in dataclasses.fields(Cell)}
RADIO_BOUNDS = {name: field_setting(LinkBudget if link else Cell if f.name in CELL_FIELDS else PhysicalSystem, f)
                for name, (link, f) in RADIO_FIELDS.items() if "rule" in f.metadata}
RADIO_DEFAULTS = {name: f.default for name, (_, f) in RADIO_FIELDS.items() if f.default is not dataclasses.MISSING}
RADIO_REQUIRES = {name: f.metadata["requires"] for name, (_, f) in RADIO_FIELDS.items() if f.metadata.get("requires")}

# [38.101] Table 5.3.2-1: 51 resource blocks of 12 subcarriers at 30 kHz fill 18.36 MHz of a 20 MHz channel
NR_20MHZ_30KHZ_OCCUPANCY = 51 * 12 * 30e3 / 20e6
NR_20MHZ_15KHZ_OCCUPANCY = 106 * 12 * 15e3 / 20e6  # ... and 106 at 15 kHz (the FDD band n1) 19.08 MHz


COMMON = {
    "ut_height_m": 1.5,  # [38.901] Table 7.8-1
    "carrier_hz": 3.5e9,  # [38.104] n78
    "duplex": "tdd",  # [38.104] n78 is a TDD band
    "tdd_pattern": "DDDSU",  # convention
    "tdd_special_symbols": "10:2:2",  # convention: downlink:guard:uplink symbols of the S slot
    "los": "probabilistic",  # [38.901] Table 7.4.2-1
    "shadowing": True,  # [38.901] Table 7.4.1-1 sigma_SF
    "fading": "ricean",  # [38.901] Table 7.5-6 K-factor for LOS links, Rayleigh for NLOS
    "subbands": 8,  # convention: 20 MHz spans >= 10 coherence bandwidths (docs/physical-layer.md)
    "downlink_bandwidth_hz": 20e6,  # [38.901] Table 7.8-1
    "uplink_bandwidth_hz": 20e6,
    "ue_power_w": 10 ** (23 / 10) / 1000,  # 23 dBm, [38.101] power class 3
    "ue_noise_figure_db": 9.0,  # [38.901] Table 7.8-1
    "bs_noise_figure_db": 5.0,  # [M.2412]
    "bs_antenna_gain_dbi": 8.0,  # [38.901] Table 7.3-1 element gain; one element: convention
    "ue_antenna_gain_dbi": 0.0,  # [38.901] Table 7.8-1 isotropic UT antenna
    # one receive port per sector: the calibrated sector antenna of [38.901] Table 7.8-1, (M, N, P) = (10, 1, 1), one
    # port; [M.2412]'s 4 GHz configurations allow far larger arrays (docs/physical-layer.md: why 1 stays the default)
    "bs_rx_antennas": 1,
    "snr_gap_db": 0.0,  # Shannon's gap (under nr-harq the MCS tables set the rates)
    # [38.214] CQI 15: the rate cap, which is also the top of the MCS tables nr-harq draws from (it binds only
    # under shannon); CQI 1: the outage floor, which under nr-harq is outage on top of MCS 0's after four copies
    "max_bps_per_hz": CQI15_BPS_PER_HZ,
    "min_bps_per_hz": CQI1_BPS_PER_HZ,
    # the NR link layer: each TDMA upload and static-cell stream through MCS, BLER and HARQ ([38.214]; docs/link-layer.md)
    "link_abstraction": "nr-harq",
    # TDMA, one drawn upload after another (fdma and pf charge HARQ at its expected value on their shares)
    "uplink_access": "tdma",
    "cycles_per_sample": 2e4,  # [Yang21]
    "cpu_hz": 1e9,
    "kappa": 1e-28,  # [Yang21]
    "compute_extra_s": 0.0,
    "receive_power_w": 0.0,  # replaced by the state model's PDSCH power while power_unit_w > 0
    # [38.840] Table 8.1-1's states (PDSCH 300, PUSCH 250-700, light sleep 20 units); 1 unit = 1 mW: convention
    "power_unit_w": 1e-3,
    # [38.840] states where the UE is: a TDD transfer's off-direction slots (PDCCH monitoring in an upload, micro sleep in
    # a reception) and a wait for a grant with data pending (PDCCH monitoring; under FDD this part alone)
    "ue_energy": "slots",
    "bandwidth_occupancy": NR_20MHZ_30KHZ_OCCUPANCY,  # [38.101] Table 5.3.2-1
    "subcarrier_spacing_hz": 30e3,  # [38.101] Table 5.3.2-1: 51 resource blocks at 30 kHz in n78
    "downlink_overhead": 0.14,  # [38.306] 4.1.2, OH for FR1 downlink
    "uplink_overhead": 0.08,  # [38.306] 4.1.2, OH for FR1 uplink
    "distances_m": None,
    # the 19-site network of TR 38.901 Sec. 7.8.1 around the cell (netsim.radio.multicell); off: one isolated cell
    "interference": True,
    "indoor_fraction": 0.8,  # [38.901] Table 7.8-1: 80% of the devices indoors
    "o2i_low_loss_fraction": 0.5,  # half low-loss, half high-loss buildings (Table 7.4.3-2; QuaDRiGa's calibration default)
    "bs_elements": 10,  # [38.901] Table 7.8-1: a vertical array of 10 elements, 0.5 wavelength apart ...
    "downtilt_deg": 12.0,  # ... steered to zenith 102 degrees: 12 degrees of electrical downtilt
    "interference_load": 1.0,  # full buffer: every other sector transmits all the time ([38.901] 7.8, [M.2412])
    # [38.213] 7.1.1 open-loop uplink power control of every device, the other sites' included; off: all at ue_power_w
    "ul_power_control": "fractional",
    # TDMA grants at each device's power headroom limit ([38.213] 7.1.1, TS 38.321 5.4.6) in DFT-s-OFDM sizes;
    # headroom (the widest grant reaching the outage floor at P_CMAX) hogs the band: docs/physical-layer.md
    "ul_allocation": "power-limit",
    "p0_dbm_per_prb": P0_DBM_PER_PRB,  # [PC]
    "alpha": PC_ALPHA,  # [PC]
}

UMI = {"scenario": "umi", "bs_height_m": 10.0, "inner_radius_m": 10.0, "outer_radius_m": 100.0, "inter_site_distance_m": 200.0,
       "bs_power_w": 10 ** (44 / 10) / 1000}  # [38.901] Table 7.8-1: ISD 200 m (isolated cell: half of it), 44 dBm
UMA = {"scenario": "uma", "bs_height_m": 25.0, "inner_radius_m": 35.0, "outer_radius_m": 250.0, "inter_site_distance_m": 500.0,
       "bs_power_w": 10 ** (49 / 10) / 1000}  # [38.901] Table 7.8-1: ISD 500 m (isolated cell: half of it), 49 dBm


@dataclass(frozen=True)
class CellPreset:
    name: str
    description: str
    parameters: dict


CELLS: dict[str, CellPreset] = {
    p.name: p
    for p in (
        CellPreset(
            "umi-3.5ghz",
            "3.5 GHz (n78, TDD DDDSU) UMi street-canyon site (TR 38.901) at the centre of 19 sites x 3 sectors, "
            "ISD 200 m, 10 m masts, 80% of devices indoors, one 20 MHz carrier, BS 44 dBm, UE up to 23 dBm (fractional power control)",
            {**COMMON, **UMI},
        ),
        CellPreset(
            "uma-3.5ghz",
            "3.5 GHz (n78, TDD DDDSU) UMa macro site (TR 38.901) at the centre of 19 sites x 3 sectors, "
            "ISD 500 m, 25 m masts, 80% of devices indoors, one 20 MHz carrier, BS 49 dBm, UE up to 23 dBm (fractional power control)",
            {**COMMON, **UMA},
        ),
        CellPreset(
            "uma-2.1ghz",
            "2.1 GHz (n1, FDD) UMa macro site (TR 38.901) at the centre of 19 sites x 3 sectors, "
            "ISD 500 m, 25 m masts, 80% of devices indoors, 20 MHz each way, BS 49 dBm, UE up to 23 dBm (fractional power control)",
            {**COMMON, **UMA, "carrier_hz": 2.14e9, "duplex": "fdd", "bandwidth_occupancy": NR_20MHZ_15KHZ_OCCUPANCY,
             "subcarrier_spacing_hz": 15e3},  # [38.104] n1 downlink 2110-2170 MHz
        ),
    )
}

ON_OFF = {"on": True, "off": False}
PARAMETERS = tuple(RADIO_FIELDS)


def cell_parameters(name: str, overrides: dict | None = None, run: dict | None = None) -> dict:
    """The preset's parameters (a parameter it does not name: its declared default) with
    ``overrides`` applied (UsageError for an unknown preset or key, or for one given off the
    preset's value that has no effect with the others: its declared ``requires``, ``RADIO_REQUIRES``;
    ``handover_margin_db`` on a static cell; with ``run``, the run's settings they need too:
    ``csi_delay_s`` a ``scheduler`` that reads the channel report)."""
    if name not in CELLS:
        raise UsageError(f"unknown cell preset {name!r}; choose from: {', '.join(CELLS)}")
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(PARAMETERS))
    if unknown:
        raise UsageError(f"unknown radio parameter {', '.join(unknown)}; known: {', '.join(sorted(PARAMETERS))}")
    if "fading" in overrides and overrides["fading"] is None:
        overrides["fading"] = "none"  # the text "none" reads as None on the command line
    for key, value in overrides.items():  # and a sweep file's "none" (TOML has no null) as the command line's none
        bound = RADIO_BOUNDS.get(key)
        if value == "none" and bound is not None and bound.none and bound.kind is not str:
            overrides[key] = None
    if isinstance(overrides.get("interference"), str) and overrides["interference"].lower() in ON_OFF:
        overrides["interference"] = ON_OFF[overrides["interference"].lower()]
    if isinstance(overrides.get("distances_m"), (str, int, float)):
        overrides["distances_m"] = _distances(overrides["distances_m"])
    preset = {**RADIO_DEFAULTS, **CELLS[name].parameters}
    parameters = {**preset, **overrides}
    values = {**parameters, **(run or {})}
    found = without_effect(RADIO_REQUIRES, values, [key for key, value in overrides.items() if value != preset.get(key)])
    if found is not None:
        key, other, wanted = found
        named = other if other in parameters else f"--{other.replace('_', '-')}"  # a run's setting: its flag
        raise UsageError(f"radio {key} has an effect only with {needs_words(named, wanted)} (this run has {named} {values[other]!r})")
    return parameters


def _distances(value) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in str(value).split(","))
    except ValueError:
        raise UsageError(f"distances_m must be comma-separated metres, got {value!r}") from None


def physical_system(parameters: dict, mode: str = "pipelined", deadline: float | None = None) -> PhysicalSystem:
    """The ``PhysicalSystem`` of flat ``parameters`` (UsageError naming the first impossible one):
    each declared range checked (``RADIO_BOUNDS``), then the cell, the links and the system built
    from their fields."""
    p = {name: RADIO_BOUNDS[name].check(f"radio {name}", value) if name in RADIO_BOUNDS else value
         for name, value in parameters.items()}
    try:
        if not isinstance(p["shadowing"], bool):
            raise ValueError(f"shadowing must be true or false, got {p['shadowing']!r}")
        if not isinstance(p["interference"], bool):
            raise ValueError(f"interference must be on or off, got {p['interference']!r}")
        cell = Cell(**{f.name: p[f.name] for f in dataclasses.fields(Cell)})
        links = {link: LinkBudget(**{field: p[name] for field, name in names.items()}) for link, names in LINKS.items()}
        rest = {f.name: p[f.name] for f in dataclasses.fields(PhysicalSystem) if f.name not in SYSTEM_ONLY}
        return PhysicalSystem(cell=cell, **links, **rest, mode=mode, deadline=deadline)
    except (ValueError, TypeError) as error:
        raise UsageError(str(error)) from None


def get_cell_system(name: str, mode: str = "pipelined", deadline: float | None = None, overrides: dict | None = None) -> PhysicalSystem:
    return physical_system(cell_parameters(name, overrides), mode, deadline)


def radio_parameters(record: dict) -> dict:
    """The flat radio parameters (``--radio`` names) of a system as ``config.json`` records it (a
    field left out of the record holds its declared default); {} for a system without a cell."""
    cell = record.get("cell")
    if not isinstance(cell, dict):
        return {}
    found = {}
    for name, (link, f) in RADIO_FIELDS.items():
        holder = record.get(link, {}) if link else cell if f.name in CELL_FIELDS else record
        found[name] = holder.get(f.name, f.default)
    return found
