"""Half precision: each coordinate of a model difference sent as a 16-bit float."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import torch

from learning.codecs import Codec, error_feedback_option
from learning.options import option


@dataclass(frozen=True)
class HalfPrecision(Codec):
    """Each coordinate rounded to a 16-bit float: 16 bits a coordinate, no header."""

    name: ClassVar[str] = "half"
    format: Literal["float16", "bfloat16"] = option("float16", "IEEE half, or bfloat16 (float32's range, 8 bits of precision)")
    ef: int = error_feedback_option(0)

    def payload_bits(self, d: int) -> float:
        return 16.0 * d

    def decode(self, vector: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return vector.to(getattr(torch, self.format)).to(vector.dtype)


CODECS = [HalfPrecision]
