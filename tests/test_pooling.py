"""``MaxPool2x2``: torch's 2x2 max-pool, the same values where no gradient flows (evaluation),
torch's own pool where one does."""

import pytest
import torch
from torch import nn

from learning.models import LeNet5, SmallCNN
from learning.pooling import MaxPool2x2, with_torch_pools

NAN, INF = float("nan"), float("inf")


def _hostile(shape, channels_last: bool) -> torch.Tensor:
    """Random values with the cases a pool must get right: ties (a digit's blank margin), NaN,
    infinities, signed zeros."""
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    x[:, :, :2] = 0.25  # whole windows of one value
    x[0, 0, 0, 1] = NAN  # a NaN beside a tie
    x[-1, -1, -2:, -2:] = -INF  # a window of -inf only
    x[-1, 0, -1, -1] = INF
    x[0, -1, -2:, :2] = torch.tensor([[-0.0, 0.0], [-1.0, -2.0]])  # the maximum is a zero of both signs
    return x.contiguous(memory_format=torch.channels_last) if channels_last else x


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal values, NaN where NaN, in the same memory layout."""
    return (torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
            and (a.stride() == b.stride() or a.shape[0] == 1))


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("shape", [(64, 6, 28, 28), (64, 16, 10, 10), (3, 8, 8, 8), (1, 6, 28, 28), (2, 16, 2, 2)])
def test_evaluation_gives_torchs_values_in_torchs_layout(shape, channels_last):
    x = _hostile(shape, channels_last)
    with torch.no_grad():
        fast, torch_pool = MaxPool2x2()(x), nn.MaxPool2d(2)(x)
    assert _same(fast, torch_pool)
    assert fast.isnan().any() and (fast == -INF).any() and (fast == INF).any()


def test_odd_sizes_other_layouts_and_gradients():
    odd = _hostile((2, 3, 7, 9), False)
    transposed = _hostile((2, 6, 8, 4), False).transpose(2, 3)  # neither contiguous nor channels-last
    with torch.no_grad():
        assert _same(MaxPool2x2()(odd), nn.MaxPool2d(2)(odd))  # floor mode: the last row and column dropped
        assert torch.equal(MaxPool2x2()(transposed).nan_to_num(), nn.MaxPool2d(2)(transposed).nan_to_num())
    x = _hostile((4, 6, 12, 12), False).nan_to_num().requires_grad_()
    weights = torch.randn(4, 6, 6, 6)
    grads = []
    for pool in (MaxPool2x2(), nn.MaxPool2d(2)):
        (pool(x) * weights).sum().backward()
        grads.append(x.grad.clone())
        x.grad = None
    assert torch.equal(grads[0], grads[1])  # ties go to the first maximum of a window, as torch's


@pytest.mark.parametrize("model, shape", [(LeNet5(1, 28), (257, 1, 28, 28)), (LeNet5(3, 32), (33, 3, 32, 32)), (SmallCNN(), (65, 1, 8, 8))])
def test_a_models_outputs_are_the_same_bit_for_bit(model, shape):
    """The trainer's layout (channels-last weights), digits with blank margins, batches of any
    size: the logits of the model with torch's pool, to the last bit."""
    fast = model.to(memory_format=torch.channels_last).eval()
    reference = with_torch_pools(type(model)(*_arguments(model))).to(memory_format=torch.channels_last).eval()
    reference.load_state_dict(fast.state_dict())
    assert not any(isinstance(m, MaxPool2x2) for m in reference.modules())
    x = torch.rand(*shape, generator=torch.Generator().manual_seed(1))
    x[:, :, :4] = 0.0
    with torch.no_grad():
        for batch in (x, x[:1], x[:64]):
            assert torch.equal(fast(batch), reference(batch))


def _arguments(model) -> tuple:
    if isinstance(model, LeNet5):
        conv = model.features[0]
        return conv.in_channels, 28 if conv.padding == (2, 2) else 32
    return ()


def test_under_vmap_it_gives_torchs_pool_values():
    """The batched engine evaluates through ``torch.func.vmap``: there too, the same logits."""
    from torch.func import functional_call, stack_module_state, vmap

    models = [LeNet5().eval() for _ in range(3)]
    params, buffers = stack_module_state(models)
    reference = with_torch_pools(LeNet5()).eval()
    x = torch.rand(5, 1, 28, 28, generator=torch.Generator().manual_seed(2))
    x[:, :, :4] = 0.0
    with torch.no_grad():
        outputs = [vmap(lambda p, b: functional_call(model, (p, b), (x,)))(params, buffers) for model in (models[0], reference)]
    assert torch.equal(outputs[0], outputs[1])
