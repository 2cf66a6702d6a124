"""Update codecs: exact payload bits, QSGD unbiasedness, top-k error feedback, decoded models in
the aggregate, and a run whose uplink falls by the codec's ratio."""

import json
import math

import numpy as np
import pytest
import torch

from learning.algorithms import ALGORITHMS, LearnerSetup
from learning.codecs import ErrorFeedback, parse_codec, qsgd, scaled_sign, top_k
from learning.data import DeviceData, FederatedData
from learning.training import LocalTraining
from learning.weights import fedavg_weights

VECTOR = torch.tensor([0.5, -2.0, 0.0, 1.0, -0.25, 3.0, 0.0, -1.5, 0.75, 0.125])  # d = 10


def test_exact_payload_bits_of_a_hand_made_vector():
    d = VECTOR.numel()
    assert parse_codec("none").payload_bits(d) == 320  # 32 d, no header
    # header 32 + 3 bucket norms (buckets of 4: ceil(10/4)) x 32 + 4 bits x 10
    assert parse_codec("qsgd:bits=4,bucket=4").payload_bits(d) == 32 + 3 * 32 + 40
    # k = ceil(0.2 x 10) = 2 values of 32 bits and indices of ceil(log2 10) = 4 bits
    assert parse_codec("topk:fraction=0.2").payload_bits(d) == 32 + 2 * (32 + 4)
    assert parse_codec("topk:fraction=0.2").payload_bits(16) == 32 + 4 * (32 + 4)  # ceil(log2 16) = 4
    assert parse_codec("topk:fraction=0.2").payload_bits(17) == 32 + 4 * (32 + 5)
    assert parse_codec("sign").payload_bits(d) == 32 + 32 + 10  # header, scale, one bit each


def test_hand_made_decodes():
    assert top_k(VECTOR, 2).tolist() == [0, -2.0, 0, 0, 0, 3.0, 0, 0, 0, 0]
    scale = float(VECTOR.abs().sum()) / 10  # 9.125 / 10
    assert scaled_sign(VECTOR).tolist() == pytest.approx([scale, -scale, scale, scale, -scale, scale, scale, -scale, scale, scale])
    # QSGD with 2 bits (s = 1) sends each coordinate as 0 or +-||v|| of its bucket
    generator = torch.Generator().manual_seed(3)
    decoded = qsgd(VECTOR, 2, 10, generator)
    norm = float(torch.linalg.vector_norm(VECTOR))
    assert set(np.round(np.abs(decoded.numpy()) / norm, 6)) <= {0.0, 1.0}
    assert (decoded[VECTOR == 0] == 0).all()


def test_bad_codec_specs_are_named():
    for text, words in (("zip", "unknown codec"), ("qsgd:bits=1", "bits must be"), ("topk:fraction=0", "fraction must be"),
                        ("topk:k=3", "no parameter 'k'"), ("sign:ef=2", "ef must be"), ("topk:fraction=nan", "fraction must be")):
        with pytest.raises(ValueError, match=words):
            parse_codec(text)
    assert parse_codec("qsgd").spec == parse_codec("qsgd:bucket=512,bits=4").spec == "qsgd:bits=4,bucket=512"


def test_an_algorithm_takes_codecs_only_where_its_own_class_says_so():
    """FedProx, Ditto, SCAFFOLD, Per-FedAvg and pFedMe derive FedAvg, parallel user-centric FL
    derives user-centric FL, yet they send other payloads or train otherwise: none inherits the
    declaration ``accepts_codecs``."""
    from learning.algorithms import codec_algorithms
    from learning.codecs import ALGORITHMS_TAKING_CODECS

    assert codec_algorithms() == ["fedavg", "oracle", "user-centric"] == list(ALGORITHMS_TAKING_CODECS)  # the help's list
    assert ALGORITHMS["fedavg"].accepts_codecs and ALGORITHMS["fedprox"].accepts_codecs  # the attribute is inherited...
    assert not ALGORITHMS["fedprox"].takes_codecs()  # ...the declaration is not
    with pytest.raises(ValueError, match="codecs apply to fedavg, oracle, user-centric; fedprox sends its own payloads"):
        _logistic_fedavg("sign", algorithm="fedprox")


def test_codec_defaults_are_valid_on_both_links(tmp_path):
    from scenarios.cli.main import main

    assert parse_codec("sign").spec == "sign:ef=1"  # the paper's EF-SignSGD on the uplink
    assert parse_codec("sign", downlink=True).spec == "sign:ef=0"  # error feedback is the sender's memory
    assert main(["run", "--algorithm", "fedavg", "--downlink-codec", "sign", "--rounds", "1", "--out", str(tmp_path),
                 "--no-figure", "--quiet"]) == 0
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert '"downlink_codec": "sign:ef=0"' in (folder / "config.json").read_text()
    assert main(["run", "--algorithm", "fedavg", "--downlink-codec", "sign:ef=1", "--rounds", "1", "--out", str(tmp_path),
                 "--no-figure", "--quiet"]) == 2  # asked for explicitly: still refused


def test_qsgd_decoded_mean_is_the_input_within_the_computed_bound():
    """E[Q(v)] = v (QSGD Lemma 3.1). Each coordinate is ``||v||/s`` times a Bernoulli step between
    two adjacent levels, so its variance is at most ``||v||^2 / (4 s^2)``; the mean of ``n``
    draws is within 5 standard deviations ``5 ||v|| / (2 s sqrt(n))`` of ``v``."""
    n, bits = 4000, 3
    levels = 2 ** (bits - 1) - 1
    generator = torch.Generator().manual_seed(0)
    draws = torch.stack([qsgd(VECTOR, bits, 10, generator) for _ in range(n)])
    bound = 5 * float(torch.linalg.vector_norm(VECTOR)) / (2 * levels * math.sqrt(n))
    assert (draws.mean(0) - VECTOR).abs().max() <= bound
    assert draws.std(0).max() > 0  # it is random, not the identity


def test_topk_error_feedback_sends_every_coordinates_mass_and_keeps_it_through_idle_rounds():
    codec = parse_codec("topk:fraction=0.1,ef=1")  # k = 1 of 10
    feedback = ErrorFeedback(codec, torch.Generator())
    update = VECTOR.abs() + 0.5  # every coordinate carries mass every round
    sent = torch.zeros(10)
    for rounds in range(1, 201):
        sent += feedback.send(0, update)
        # nothing is lost: what was sent plus the memory is every update summed
        assert torch.allclose(sent + feedback.memory[0], rounds * update, rtol=1e-5)
    assert (sent > 0).all()  # every coordinate went out
    memory = feedback.memory[0].clone()
    feedback.send(1, update)  # another device sends; device 0 sits idle
    assert torch.equal(feedback.memory[0], memory)
    without = ErrorFeedback(parse_codec("topk:fraction=0.1"), torch.Generator())
    assert int((sum(without.send(0, update) for _ in range(20)) > 0).sum()) == 1  # no memory: one coordinate only


def _logistic_fedavg(uplink="none", downlink="none", seed=1, algorithm="fedavg"):
    rng = np.random.default_rng(0)
    devices = []
    for n in (6, 9, 12):
        x = torch.from_numpy(rng.normal(size=(n, 4)).astype(np.float32))
        y = torch.from_numpy(rng.integers(0, 3, n))
        devices.append(DeviceData(x, y, x[:2], y[:2]))
    data = FederatedData(tuple(devices), num_classes=3)
    training = LocalTraining(lr=0.5, momentum=0.0, batch_size=100, epochs=1, backend="loop")
    setup = LearnerSetup(data, "logistic", {"in_features": 4, "num_classes": 3}, training, np.random.SeedSequence(seed),
                         uplink_codec=parse_codec(uplink), downlink_codec=parse_codec(downlink, downlink=True))
    return ALGORITHMS[algorithm](setup)


def _outcome(plan):
    from contract import RoundOutcome

    everyone = plan.participants
    return RoundOutcome(everyone, everyone, everyone)


def test_decoded_updates_reach_the_aggregate_and_devices_start_from_the_decoded_model():
    fed = _logistic_fedavg("topk:fraction=0.25", "sign:ef=0")
    reference = _logistic_fedavg()  # same seed: trains as fed's devices do, from given starts
    d = fed.theta.shape[1]  # 4 x 3 + 3 = 15
    for server_round in (1, 2):
        last_received = fed.links.reference.clone()
        plan = fed.plan_round(server_round)
        assert plan.uplink_bits == {k: 32 + 4 * (32 + 4) for k in range(3)}  # k = ceil(0.25 x 15) = 4, ceil(log2 15) = 4
        assert [s.bits for s in plan.streams] == [32 * d if server_round == 1 else 32 + 32 + d]  # the first model whole
        target = fed.theta.clone()
        fed.round_outcome(server_round, _outcome(plan))
        starts = fed.held.clone()
        if server_round == 1:
            assert torch.equal(starts, target)
        else:  # last round's model plus the decoded scaled sign of the change
            expected = last_received + torch.stack([scaled_sign(target[k] - last_received[k]) for k in range(3)])
            assert torch.allclose(starts, expected, atol=1e-6) and not torch.allclose(starts, target, atol=1e-3)
        trained = reference.trainer.train_many([reference.job(k, starts[k]) for k in range(3)])
        fed.local_update(server_round, [0, 1, 2])
        fed.aggregate(server_round, [0, 1, 2])
        decoded = starts + torch.stack([top_k(trained[k] - starts[k], 4) for k in range(3)])
        weights = torch.from_numpy(fedavg_weights(fed.train_sizes)).float()
        assert torch.allclose(fed.theta, weights @ decoded, atol=1e-6)


def test_codec_draws_and_memories_are_part_of_the_runs_determinism():
    def run(seed):
        fed = _logistic_fedavg("qsgd:bits=2,bucket=4", "qsgd:bits=3", seed)
        for server_round, devices in ((1, [0, 1, 2]), (2, [0, 2]), (3, [0, 1, 2])):  # device 1 idle in round 2
            plan = fed.plan_round(server_round)
            fed.round_outcome(server_round, _outcome(plan))
            fed.local_update(server_round, devices)
            fed.aggregate(server_round, devices)
        return fed.theta

    assert torch.equal(run(1), run(1))
    assert not torch.equal(run(1), run(2))


def test_a_run_with_an_uplink_codec_shrinks_uplink_bits_and_time_by_its_ratio(tmp_path):
    """Barrier timing on wireless-slow-ul: downlink, then every compute (the same draws), then the
    uploads one after another, so each round is shorter by ``(1 - ratio)`` of its uplink time."""
    from scenarios.execution.runner import RunSpec, run_experiment

    runs = {}
    for codec in ("none", "qsgd:bits=4"):
        spec = RunSpec("digits-rotation", "fedavg", "wireless-slow-ul", rounds=2, uplink_codec=codec, devices=6, mode="barrier",
                       training={"backend": "loop"})
        folder = run_experiment(spec, tmp_path)["result_dir"]
        plans = [json.loads(line)["plan"] for line in open(f"{folder}/plans.jsonl")]
        trace = [line.split(",") for line in open(f"{folder}/trace.csv").read().splitlines()[1:]]
        uplink_s = [float(row[4]) - float(row[3]) for row in trace if row[1] == "uplink"]
        duration = [float(line.split(",")[2]) for line in open(f"{folder}/rounds.csv").read().splitlines()[2:]]
        runs[codec] = plans, uplink_s, duration, json.load(open(f"{folder}/config.json"))
    (plans, uplink_s, duration, config), (plans_q, uplink_s_q, duration_q, config_q) = runs["none"], runs["qsgd:bits=4"]
    d = config["model"]["bits"] / 32
    ratio = (32 + 32 * math.ceil(d / 512) + 4 * d) / (32 * d)
    assert "communication" not in config and config_q["communication"] == {"uplink_codec": "qsgd:bits=4,bucket=512"}
    for plan, plan_q in zip(plans[1:], plans_q[1:]):
        assert plan_q["participants"] == plan["participants"] and plan_q["streams"] == plan["streams"]
        for device, bits in plan["uplink_bits"].items():
            assert plan_q["uplink_bits"][device] == pytest.approx(ratio * bits, rel=1e-12)
    assert len(uplink_s_q) == len(uplink_s) == 12
    assert np.allclose(uplink_s_q, ratio * np.array(uplink_s), rtol=1e-9)  # rho x bits / model bits each
    per_round = np.array(uplink_s).reshape(2, 6).sum(axis=1)  # 6 uploads a round, one after another
    assert np.allclose(np.subtract(duration, duration_q), (1 - ratio) * per_round, rtol=1e-9)
