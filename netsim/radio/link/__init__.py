"""The NR link layer (TS 38.214 / 38.212 / 38.321): MCS and CQI tables, transport block size,
EESM effective SINR, BLER per MCS fitted to a public AWGN source, link adaptation with an outer
loop, HARQ with chase combining, and one upload's MCS, blocks, transmissions, time and energy.

Self-contained: it imports nothing else of ``netsim``; ``docs/link-layer.md`` describes it.
"""

from netsim.radio.link.adaptation import Grant, OuterLoop, multicast_grant, select_mcs
from netsim.radio.link.harq import HarqTiming
from netsim.radio.link.upload import LinkConfig, UploadResult, upload

__all__ = ["Grant", "HarqTiming", "LinkConfig", "OuterLoop", "UploadResult", "multicast_grant", "select_mcs", "upload"]
