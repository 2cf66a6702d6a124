"""The radio: the cell and its channel, from geometry to bit/s and joules.

The physical system and its bound network (``physical``: ``PhysicalSystem``,
``PhysicalNetwork``, ``RoundChannel``), the layouts (``cell``; the 19-site network,
``multicell``), TR 38.901's large scale (``pathloss``), small-scale fading (``fading``), the link
budget (``link_budget``: noise, SNR, SINR, Shannon with a gap and a cap), duplexing (``duplex``),
device energy (``energy``), what one round's draw answers a round process (``physical_links``)
and the NR link layer (``link/``, self-contained). The cell in time (motion, availability,
batteries) is ``netsim.dynamics``, a room of its own: it is the devices' state as much as the
channel's.

May import: ``netsim.transport`` (the cell hands the engine its round processes),
``netsim.dynamics``, ``netsim.normalized.distributions`` (the compute model's random part) and
the protocols at netsim's top; never ``netsim.clock``; ``link/`` imports nothing else of
netsim: ``tests/test_layers.py`` checks it.

Modules:

- ``cell``: A cell: one base station at the origin and its devices, placed by a seeded layout, with
  their large-scale channel (TR 38.901 path loss, LOS state, log-normal shadowing).
- ``duplex``: Duplexing: how downlink and uplink share the spectrum.
- ``energy``: Device energy per round (joules): radio on the air, and the CPU.
- ``fading``: Small-scale block fading: the power gain ``|h|^2`` of a link in one round, per
  subband.
- ``harq_downlink``: The cell's multicast streams through the NR link layer (``link_abstraction``
  ``nr-harq``): the whole downlink band, a PDSCH to every listener at once with HARQ until each
  has decoded (NR MBS point-to-multipoint with HARQ feedback: TS 38.300 16.10, TS 38.321 5.3).
- ``harq_uplink``: The cell's TDMA uploads through the NR link layer (``link_abstraction``
  ``nr-harq``): the grant's per-PRB SINRs, EESM link adaptation with the device's outer loop,
  drawn block errors and HARQ, and the upload's wall-clock time and energy.
- ``link``: The NR link layer (TS 38.214 / 38.212 / 38.321): MCS and CQI tables, transport block
  size, EESM effective SINR, BLER per MCS fitted to a public AWGN source, link adaptation with an
  outer loop, HARQ with chase combining, and one upload's MCS, blocks, transmissions, time and
  energy.
- ``link_budget``: Link budget and rates: thermal noise, SNR, Shannon rate with an SNR gap and a
  spectral efficiency cap. Powers in dBm or W, bandwidths in Hz, rates in bit/s.
- ``multicell``: The cell inside a network: TR 38.901's 19-site, 3-sector hexagonal layout with
  wrap-around (Table 7.8-1, the large-scale calibration of Sec. 7.8.1), numpy throughout.
- ``pathloss``: 3GPP TR 38.901 (V16.1.0) large-scale propagation: path loss (Table 7.4.1-1), shadow-
  fading standard deviations (same table; an O2I link's from Table 7.5-6), LOS probability (Table
  7.4.2-1) and the LOS Ricean K-factor's distribution (Table 7.5-6, ``K ~ N(mu_K, sigma_K)`` in dB)
  for UMi street canyon and UMa.
- ``physical``: The physical network system: a cell, link budgets, block fading (Ricean LOS,
  Rayleigh NLOS; flat or over independent subbands), Shannon rates with a gap, a cap and an outage
  floor, FDD or TDD, compute in CPU cycles, and energy. Time is in seconds, energy in joules.
- ``physical_links``: One round of a physical network: every duration, reception and energy the
  physical round asks about, from this round's block-fading draw (time in seconds, energy in
  joules).
"""
