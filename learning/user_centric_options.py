"""User-centric FL's options (journal Algorithms 1 and 2, eq. 10-12), declared without torch:
``--streams`` and ``--lambda`` are flags of ``run`` and ``compare``, whose ``--help`` imports
no torch. The learner is ``learning/algorithms/user_centric.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from contract.setting import MAX_DEVICES
from learning.options import Options, option


@dataclass(frozen=True)
class UserCentricOptions(Options):
    streams: int | Literal["auto"] | None = option(None, "stream count k: an integer, 'auto' (Algorithm 2) or 'm' (k = m, a stream per device)", low=1,
                                                   high=MAX_DEVICES, flag="--streams", label="k", none_word="m",
                                                   reported="streams_chosen")
    lam: float = option(0.0, "lambda of eq. 12: Algorithm 2 picks argmax_k s_k - lambda k", low=0, requires={"streams": "auto"},
                        flag="--lambda")
    variance_batches: Literal["disjoint", "reference"] = option(
        "disjoint", "eq. 10 mini-batches: disjoint ones (the paper's text) or the reference code's independent draws")
    variance_batch_fraction: float = option(1 / 3, "disjoint: each mini-batch's share of the local set", low=0, high=1,
                                            low_open=True, high_open=True, requires={"variance_batches": "disjoint"})
    variance_batch_size: int | None = option(None, "disjoint: each mini-batch's size in points (none: by the fraction)", low=1,
                                             requires={"variance_batches": "disjoint"})
    variance_divisor: float = option(2.5, "reference: floor(d) draws of floor(n_i / d) points (at most the smallest local set)",
                                     low=1, requires={"variance_batches": "reference"})
    formation: Literal["similarity", "channel"] = option(
        "similarity", "streams by k-means on W's rows (eq. 11) or by least downlink airtime (a physical cell)")
    silhouette_loss: float = option(0.05, "channel: the silhouette the formation may give up against eq. 11's", low=0,
                                    requires={"formation": "channel"})

    @classmethod
    def label_note(cls, given) -> str:
        if given.get("formation") != "channel":
            return ""
        loss = given.get("silhouette_loss")
        return " channel" + ("" if loss is None else f" loss={loss}")
