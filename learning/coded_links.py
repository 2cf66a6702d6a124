"""The coded links of the weight-matrix family: uplink updates and downlink models through codecs.

Uplink: a device sends its model difference ``theta_half - start`` (``start``: the model it
trained from) through the uplink codec, with its own error-feedback memory; the server
aggregates ``start + decoded``. Downlink: a stream sends the difference between its model and
the model its listeners last received (both ends keep that copy), and the listeners start from
``reference + decoded``; a listener that never received a model gets it uncompressed (32 bits a
coordinate). Listeners of one model that last received different models get separate streams.
Each direction draws from its own stream of the learner's seed (``contract.seeds.LearnerSeeds``),
so a codec changes no other random stream.
"""

from __future__ import annotations

import torch

from contract.seeds import LearnerSeeds
from learning.codecs import Codec, ErrorFeedback
from learning.training import torch_generator


class CodedLinks:
    """Codec state of one run: uplink error feedback per device, downlink references."""

    def __init__(self, uplink: Codec, downlink: Codec, seeds: LearnerSeeds, theta: torch.Tensor):
        self.uplink, self.downlink = uplink, downlink
        if self.downlink.error_feedback:
            raise ValueError("error feedback (ef=1) applies to the uplink codec; give the downlink codec ef=0")
        self.feedback = ErrorFeedback(self.uplink, torch_generator(seeds.uplink_codec))
        self.downlink_generator = torch_generator(seeds.downlink_codec)
        num_devices, self.dimension = theta.shape
        self.reference = theta.clone()  # the model each device last received (downlink)
        self.reference_key: list = [("none",)] * num_devices
        self.pending: dict[int, tuple[torch.Tensor, tuple]] = {}  # device -> (decoded model, key), this round
        self.streams_sent = 0

    @property
    def active(self) -> bool:
        return not (self.uplink.is_identity and self.downlink.is_identity)

    def uplink_bits(self, model_bits: float) -> float:
        return model_bits if self.uplink.is_identity else self.uplink.payload_bits(self.dimension)

    def send_update(self, device: int, start: torch.Tensor, trained: torch.Tensor) -> torch.Tensor:
        """The server's copy of ``device``'s trained model: ``start + decoded(trained - start)``."""
        if self.uplink.is_identity:
            return trained
        return start + self.feedback.send(device, trained - start)

    def stream_key(self, device: int) -> tuple:
        return self.reference_key[device] if not self.downlink.is_identity else ()

    def send_model(self, devices, model: torch.Tensor, model_bits: float) -> float:
        """Code ``model`` for one stream to ``devices`` (who share one reference);
        keeps what they will decode and returns the stream's bits."""
        if self.downlink.is_identity:
            return model_bits
        first = devices[0]
        if self.reference_key[first] == ("none",):
            decoded, bits = model.clone(), model_bits
        else:
            reference = self.reference[first]
            decoded = reference + self.downlink.decode(model - reference, self.downlink_generator)
            bits = self.downlink.payload_bits(self.dimension)
        self.streams_sent += 1
        for device in devices:
            self.pending[device] = (decoded, ("stream", self.streams_sent))
        return bits

    def delivered(self, received) -> list[int]:
        """Devices that got their coded model this round (their reference is now it)."""
        got = [d for d in self.pending if d in received]
        for device in got:
            self.reference[device], self.reference_key[device] = self.pending[device]
        self.pending = {}
        return got
