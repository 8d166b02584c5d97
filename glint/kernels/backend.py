"""Which implementation a kernel runs: Triton or torch.

A Triton kernel runs for CUDA tensors when Triton imports (and
:func:`enable_triton` has not turned it off: the triton_strings setting,
which the first connection of a process applies); everything else, the CPU
included, runs the torch code of the same module. Kernels are launched inside the tensor's
device context, so a tensor on ``cuda:1`` gets its kernel on that GPU.

>>> import torch
>>> use_triton(torch.zeros(1))
False
"""

from __future__ import annotations

import contextlib

import torch

try:
    import triton  # noqa: F401
    import triton.language as tl  # noqa: F401

    HAS_TRITON = True
except ImportError:  # no Triton (macOS, a CPU-only install): the torch code runs everywhere
    HAS_TRITON = False


_ENABLED = True  # the Triton kernels run where they can (enable_triton)


def enable_triton(enabled: bool) -> None:
    """Whether the Triton kernels run where they can (False: the torch code
    everywhere, to time it against them)."""
    global _ENABLED
    _ENABLED = bool(enabled)


def triton_enabled() -> bool:
    """Whether Triton kernels run on CUDA tensors (see :func:`use_triton`)."""
    return HAS_TRITON and _ENABLED


def use_triton(t: torch.Tensor) -> bool:
    """True when the Triton kernel should run for tensors like ``t``."""
    return HAS_TRITON and t.is_cuda and _ENABLED


def on_device(t: torch.Tensor):
    """The context to launch a kernel for ``t`` in (a no-op off CUDA, where the
    interpreter runs kernels in tests)."""
    return torch.cuda.device(t.device) if t.is_cuda else contextlib.nullcontext()


def blocks(n: int, block: int) -> int:
    """Programs needed for n items, ``block`` per program (at least one, so
    launch shapes never go empty).

    >>> blocks(0, 32), blocks(33, 32)
    (1, 2)
    """
    return max(1, -(-n // block))
