"""Update codecs: what a model difference costs on the air and what the receiver decodes.

A codec is a small registered class (``CODECS``; a plugin adds its own with ``CODECS = [...]``):
its ``name``; its parameters, declared once as the fields of a frozen dataclass (type, default,
range and doc: ``learning.options.option``); ``payload_bits(d)``, the exact bits of one coded
vector of ``d`` float32 coordinates; and ``decode(vector, generator)``, what the receiver gets.
A run names one by a spec such as ``none``, ``qsgd:bits=4``, ``topk:fraction=0.01,ef=1`` or
``sign`` (``parse_codec``); the canonical spec (every parameter, sorted) is what config.json
records.

A parameter named ``ef`` (0 or 1) is error feedback: the sender keeps the residual and adds it to
its next update (Stich et al., NeurIPS 2018, Alg. 1 "memory"; ``ErrorFeedback``). It is the
sender's memory of its own updates, so on the downlink ``ef`` defaults to 0
(``parse_codec(..., downlink=True)``). Its memory is per sender and kept across the rounds in
which the sender does not transmit.

``HEADER_BITS`` (32) carries a payload's length. The declarations import no torch (a command's
``--help`` lists the codecs); the coders take it when they run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from contract.setting import UsageError, parse_number
from learning.options import Options, option

if TYPE_CHECKING:
    import torch

HEADER_BITS = 32
FLOAT_BITS = 32
MAX_BUCKET = 10**9
# the built-in algorithms that take a codec, for the help (their learners declare it, ``accepts_codecs``,
# as a plugin's may: ``learning.algorithms.codec_algorithms``; tests/test_codecs.py checks the two agree)
ALGORITHMS_TAKING_CODECS = ("fedavg", "oracle", "user-centric")


def error_feedback_option(default: int):
    """The ``ef`` parameter of a codec that supports error feedback (its uplink default)."""
    return option(default, "1: the sender keeps the residual and adds it to its next update (error feedback)", low=0, high=1)


@dataclass(frozen=True)
class Codec(Options):
    """Base of every codec: its fields are its parameters. A subclass sets ``name`` and gives
    ``payload_bits`` and ``decode``; ``CODECS`` (or a plugin's ``CODECS``) registers it."""

    name: ClassVar[str] = ""
    is_identity: ClassVar[bool] = False  # decodes what it is given, at 32 bits a coordinate

    @property
    def spec(self) -> str:
        """The canonical spec (every parameter, sorted): what config.json records."""
        params = sorted(self.as_dict().items())
        if not params:
            return self.name
        return self.name + ":" + ",".join(_assignment(key, value) for key, value in params)

    @property
    def error_feedback(self) -> bool:
        return bool(getattr(self, "ef", 0))

    def payload_bits(self, d: int) -> float:
        """Exact bits of one coded vector of ``d`` coordinates."""
        raise NotImplementedError

    def decode(self, vector: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """What the receiver decodes from the coded ``vector`` (``generator``: the codec's draws)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Identity(Codec):
    """The vector as it is, 32 bits a coordinate (no header: the model as without a codec)."""

    name: ClassVar[str] = "none"
    is_identity: ClassVar[bool] = True

    def payload_bits(self, d: int) -> float:
        return float(FLOAT_BITS * d)

    def decode(self, vector: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return vector.clone()


@dataclass(frozen=True)
class QSGD(Codec):
    """QSGD stochastic quantization (Alistarh et al., NeurIPS 2017, Sec. 3.1). With its
    bucketing, each bucket of ``bucket`` coordinates is sent as its norm (32 bits) and, per
    coordinate, a sign and a level in ``0..s`` (``bits`` bits in all, ``s = 2^(bits-1) - 1``).
    ``Q(v_i) = ||v|| sign(v_i) xi_i`` with ``xi_i`` the level ``l/s`` or ``(l+1)/s`` drawn so that
    ``E[Q(v)] = v`` (Lemma 3.1). Bits: ``HEADER + 32 ceil(d / bucket) + bits d`` (the paper's
    fixed-length code, not Elias)."""

    name: ClassVar[str] = "qsgd"
    bits: int = option(4, "bits per coordinate: its sign and its level", low=2, high=16)
    bucket: int = option(512, "coordinates per bucket (one 32-bit norm each)", low=1, high=MAX_BUCKET)

    def payload_bits(self, d: int) -> float:
        return float(HEADER_BITS + FLOAT_BITS * math.ceil(d / self.bucket) + self.bits * d)

    def decode(self, vector: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return qsgd(vector, self.bits, self.bucket, generator)


@dataclass(frozen=True)
class TopK(Codec):
    """Top-k sparsification: the ``k = ceil(fraction d)`` coordinates of largest magnitude. Each
    is sent as its value (32 bits) and its index (``ceil(log2 d)`` bits):
    ``HEADER + k (32 + ceil(log2 d))``."""

    name: ClassVar[str] = "topk"
    fraction: float = option(0.01, "share of the coordinates sent", low=0, high=1, low_open=True)
    ef: int = error_feedback_option(0)

    def payload_bits(self, d: int) -> float:
        return float(HEADER_BITS + topk_count(d, self.fraction) * (FLOAT_BITS + index_bits(d)))

    def decode(self, vector: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return top_k(vector, topk_count(vector.numel(), self.fraction))


@dataclass(frozen=True)
class ScaledSign(Codec):
    """Scaled sign, ``(||p||_1 / d) sign(p)`` (Karimireddy et al., ICML 2019, EF-SignSGD Alg. 1).
    One scale and one bit a coordinate, ``HEADER + 32 + d``; error feedback on by default on the
    uplink, as in the paper."""

    name: ClassVar[str] = "sign"
    ef: int = error_feedback_option(1)

    def payload_bits(self, d: int) -> float:
        return float(HEADER_BITS + FLOAT_BITS + d)

    def decode(self, vector: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return scaled_sign(vector)


CODECS: dict[str, type[Codec]] = {cls.name: cls for cls in (Identity, QSGD, TopK, ScaledSign)}


def parse_codec(text: str, downlink: bool = False) -> Codec:
    """``name`` or ``name:key=value,key=value``; ValueError naming what is wrong. On the
    ``downlink``, ``ef`` defaults to 0 (error feedback is an uplink memory)."""
    if not isinstance(text, str):
        raise ValueError(f"a codec is a name such as 'qsgd:bits=4', got {text!r}")
    name, _, rest = text.partition(":")
    if name not in CODECS:
        raise ValueError(f"unknown codec {name!r}; choose from {', '.join(CODECS)}")
    cls = CODECS[name]
    known = cls.settings()
    values = {"ef": 0} if downlink and "ef" in known else {}
    given = set()
    for item in filter(None, rest.split(",")):
        key, eq, raw = item.partition("=")
        if key not in known:
            raise ValueError(f"codec {name} has no parameter {key!r}; its parameters: {', '.join(known) or 'none'}")
        if key in given:
            raise ValueError(f"codec {name} parameter {key} is given twice ({text!r}); give it once")
        given.add(key)
        setting = known[key]
        try:
            if not eq:
                raise ValueError(f"{key} has no value")
            values[key] = setting.check(key, _read(setting.kind, raw))
        except (ValueError, KeyError, UsageError):
            raise ValueError(f"codec {name} parameter {key} must be {setting.allowed()}, got {raw!r}") from None
    return cls(**values)


def _read(kind: type, raw: str):
    """A parameter's text as its kind (ValueError or KeyError when it is not one)."""
    if kind is bool:
        return {"true": True, "false": False, "1": True, "0": False}[raw.lower()]
    return raw if kind is str else parse_number(raw, kind)


def _assignment(key: str, value) -> str:
    return f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"


def codec_help() -> str:
    """The registered codecs with their parameters' defaults, for the command line's help:
    ``none (default), qsgd[:bits=4,bucket=512], ...`` (``ALGORITHMS_TAKING_CODECS``
    names the algorithms that take one)."""

    def one(cls: type[Codec]) -> str:
        defaults = ",".join(_assignment(key, value) for key, value in cls.defaults().items())
        return cls.name + (" (default)" if cls.is_identity else f"[:{defaults}]" if defaults else "")

    return ", ".join(one(cls) for cls in CODECS.values())


def index_bits(d: int) -> int:
    """Bits of one coordinate index among ``d``: ``ceil(log2 d)`` (0 when d = 1)."""
    return max(0, (d - 1).bit_length())


def topk_count(d: int, fraction: float) -> int:
    return max(1, math.ceil(fraction * d - 1e-9))


def qsgd(vector: torch.Tensor, bits: int, bucket: int, generator: torch.Generator) -> torch.Tensor:
    """QSGD's ``Q_s`` per bucket, ``s = 2^(bits-1) - 1`` levels; unbiased (Lemma 3.1)."""
    import torch

    levels = 2 ** (bits - 1) - 1
    d = vector.numel()
    padded = torch.zeros(math.ceil(d / bucket) * bucket, dtype=vector.dtype)
    padded[:d] = vector
    rows = padded.view(-1, bucket)
    norms = torch.linalg.vector_norm(rows, dim=1, keepdim=True)
    scaled = torch.where(norms > 0, rows.abs() / torch.where(norms > 0, norms, 1) * levels, 0)
    lower = torch.floor(scaled)
    up = torch.rand(rows.shape, generator=generator, dtype=vector.dtype) < (scaled - lower)
    quantized = (lower + up) / levels * norms * torch.sign(rows)
    return quantized.reshape(-1)[:d].clone()


def top_k(vector: torch.Tensor, k: int) -> torch.Tensor:
    """The ``k`` coordinates of largest magnitude kept, the rest zero (ties: lowest index)."""
    import torch

    order = torch.argsort(vector.abs(), descending=True, stable=True)[:k]
    decoded = torch.zeros_like(vector)
    decoded[order] = vector[order]
    return decoded


def scaled_sign(vector: torch.Tensor) -> torch.Tensor:
    """``(||p||_1 / d) sign(p)`` (EF-SignSGD's compressor; zero coordinates send +)."""
    import torch

    scale = vector.abs().sum() / vector.numel()
    return torch.where(vector >= 0, scale, -scale).to(vector.dtype)


class ErrorFeedback:
    """Per-sender residual memory: ``p = update + e``; send ``C(p)``; ``e <- p - C(p)``.

    Without error feedback the codec is applied to the update alone. A sender's memory stays
    as it was through the rounds it does not transmit.
    """

    def __init__(self, codec: Codec, generator: torch.Generator):
        self.codec = codec
        self.generator = generator
        self.memory: dict[int, torch.Tensor] = {}

    def send(self, sender: int, update: torch.Tensor) -> torch.Tensor:
        """The decoded update the receiver gets from ``sender``."""
        if not self.codec.error_feedback:
            return self.codec.decode(update, self.generator)
        corrected = update + self.memory.get(sender, 0)
        decoded = self.codec.decode(corrected, self.generator)
        self.memory[sender] = corrected - decoded
        return decoded
