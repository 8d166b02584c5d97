"""The device facts that glint's arithmetic depends on, checked on every
device present: CUDA divides a tensor by a Python float
through its reciprocal (not correctly rounded), and torch.neg keeps a NaN's
sign on CUDA while x86 flips it, so glint divides by tensors and negates
doubles by flipping the sign bit."""

import math
import struct

import pytest
import torch

from glint.functions.casts import exact_div
from glint.functions.numeric import _flip_sign

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


@pytest.mark.parametrize("device", DEVICES)
def test_exact_div_is_correctly_rounded(device):
    vals = [-9999.0, 1.0, 7.0, 123456789.0, -0.3, 2.0**52 + 1]
    for k in (10, 3, 7, 100, 1000):
        got = exact_div(torch.tensor(vals, dtype=torch.float64, device=device), k).tolist()
        assert got == [v / k for v in vals], k  # Python's division is IEEE's


@pytest.mark.parametrize("device", DEVICES)
def test_negation_flips_a_nans_sign(device):
    nan = torch.tensor([float("nan"), -0.0, 1.5], dtype=torch.float64, device=device)
    out = _flip_sign(nan).tolist()
    assert _bits(out[0]) == _bits(float("nan")) ^ (-(1 << 63))  # the sign bit, and only it
    assert math.copysign(1.0, out[1]) == 1.0 and out[2] == -1.5


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_the_cuda_facts_themselves():
    """If these start to fail, CUDA changed and the workarounds may be dropped."""
    v = torch.tensor([-9999.0], dtype=torch.float64, device="cuda")
    assert (v / 10.0).item() != -9999.0 / 10  # reciprocal multiplication
    n = torch.tensor([float("nan")], dtype=torch.float64, device="cuda")
    assert _bits(torch.neg(n).item()) == _bits(n.item())
