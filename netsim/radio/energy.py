"""Device energy per round (joules): radio on the air, and the CPU.

The radio is charged for the symbols it sends or receives, not for the wall-clock time of a
transfer: under TDD an upload of ``t`` seconds spans D and S slots in which the device is
silent, so it is charged ``P x uplink share x t`` (``ue_energy`` ``airtime``, the default); under
``slots`` those other slots are charged at the state the UE is in there (``OFF_SLOT_STATE``), and
a wait for an uplink grant with data pending at PDCCH monitoring (``GRANT_WAIT_STATE``).

Compute energy is the standard CMOS model of the wireless-FL literature: ``E = kappa C f^2``
for ``C`` CPU cycles at clock ``f`` (Hz) with effective switched capacitance ``kappa``
(Yang et al., "Energy efficient federated learning over wireless communication networks",
IEEE TWC 20(3), 2021, Sec. II). Tran et al. (INFOCOM 2019, eq. 3) write the same model as
``(alpha / 2) C f^2``: their ``alpha`` is ``2 kappa``, so a ``kappa`` taken from Yang et al.
(1e-28) is used as is, and an ``alpha`` from Tran et al. must be halved.
"""

from __future__ import annotations

import numpy as np

# TR 38.840 (UE power saving) Table 8.1-1, the UE power consumption model for FR1: each state's
# power relative to one unit (the study gives no absolute scale: ``power_unit_w`` sets it)
TR38840_UNITS = {"deep_sleep": 1.0, "light_sleep": 20.0, "micro_sleep": 45.0, "pdcch_only": 100.0, "pdsch": 300.0,
                 "pusch_0dbm": 250.0, "pusch_23dbm": 700.0}
WAITING_STATE = "light_sleep"  # waiting in the round (connected-mode DRX between its PDCCH occasions)
# ``ue_energy``: how a transfer's wall-clock time and a grant wait are charged. ``airtime`` (the
# default): a transfer is charged for its own direction's symbols only, a grant wait as waiting.
# ``slots``: under TDD the transfer's off-direction slots are charged at the UE's state there, a
# grant wait with data pending at PDCCH monitoring (TR 38.840 Table 8.1-1, docs/physical-layer.md)
UE_ENERGY = ("airtime", "slots")
# During an upload the D slots (and the special slot's downlink part) carry the PDCCH that
# schedules its next U slots: the UE is in active time and monitors it (PDCCH-only, 100 units).
# During a reception the U slots carry nothing for it (no PUSCH granted; its HARQ-ACK is not
# modelled): micro sleep (45 units, the state of TR 38.840 with no transition time).
OFF_SLOT_STATE = {"uplink": "pdcch_only", "downlink": "micro_sleep"}
GRANT_WAIT_STATE = "pdcch_only"  # data pending, a scheduling request sent: active time (TS 38.321 5.7), PDCCH monitored
PUSCH_0DBM_W, PUSCH_23DBM_W = 1e-3, 10 ** (23 / 10) / 1e3


def pusch_state_w(unit_w: float, tx_power_w):
    """The device's power while it sends PUSCH at ``tx_power_w`` radiated: TR 38.840's 250 units
    at 0 dBm and 700 at 23 dBm, linear in the radiated watts between and beyond them (the power
    amplifier's draw grows with its output), never below the 0 dBm value."""
    slope = (TR38840_UNITS["pusch_23dbm"] - TR38840_UNITS["pusch_0dbm"]) / (PUSCH_23DBM_W - PUSCH_0DBM_W)
    extra = np.maximum(np.asarray(tx_power_w, dtype=float) - PUSCH_0DBM_W, 0.0)
    return unit_w * (TR38840_UNITS["pusch_0dbm"] + slope * extra)


def idle_energy_j(idle_power_w: float, round_s: float, busy_s: float, grant_wait_s: float = 0.0,
                  grant_wait_w: float = 0.0) -> float:
    """Waiting in a round: its power times the round's time the device spends neither receiving
    nor sending (computing included: the modem waits meanwhile). With ``grant_wait_w`` (``ue_energy``
    ``slots``) the ``grant_wait_s`` of that time it waits for its grant with data pending is
    charged at ``grant_wait_w`` (PDCCH monitoring) instead."""
    if not grant_wait_w:
        return idle_power_w * max(round_s - busy_s, 0.0)
    return idle_power_w * max(round_s - busy_s - grant_wait_s, 0.0) + grant_wait_w * grant_wait_s


def transmit_energy_j(tx_power_w: float, airtime_s, on_air_share: float = 1.0, off_power_w: float = 0.0):
    """Radiated transmit power times the time on the air: ``P x share x airtime``, ``airtime``
    the transfer's wall-clock time and ``share`` the fraction of it the device transmits (TDD:
    the pattern's uplink symbols, ``netsim.radio.duplex.tdd_shares``; FDD: 1). With
    ``off_power_w`` (``ue_energy`` ``slots``) the rest of the airtime, the pattern's other
    slots, is charged at it: ``+ P_off x (1 - share) x airtime``. Scalars or arrays."""
    joules = tx_power_w * on_air_share * airtime_s
    if off_power_w:
        joules = joules + off_power_w * (1.0 - on_air_share) * airtime_s
    return joules


def receive_energy_j(receive_power_w: float, listening_s, on_air_share: float = 1.0, off_power_w: float = 0.0):
    """Receiver power times the time it listens: ``P x share x listening``, ``share`` the
    direction's fraction of the transfer's wall-clock time (TDD: the downlink symbols); with
    ``off_power_w`` the other symbols at it, as ``transmit_energy_j``."""
    return transmit_energy_j(receive_power_w, listening_s, on_air_share, off_power_w)


def compute_energy_j(kappa: float, cycles: float, cpu_hz: float) -> float:
    """``kappa * cycles * f^2``."""
    return kappa * cycles * cpu_hz**2


def compute_time_s(cycles: float, cpu_hz: float) -> float:
    """The deterministic part of the compute time: ``cycles / f``."""
    return cycles / cpu_hz
