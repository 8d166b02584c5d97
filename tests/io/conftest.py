"""The IO tests' fake CUDA device: the pinned pool's interface over ordinary
host buffers and torch.cuda's streams, events and device contexts stubbed,
so that the upload's logic (windows, copies, stream order) runs on the CPU
with tensors "on the device" being host ones."""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
import torch


class FakePool:
    """glint.io.pinned.PinnedPool's interface over ordinary host buffers."""

    def __init__(self, buffer_bytes):
        self.buffer_bytes = buffer_bytes
        self.device = torch.device("cpu")
        self.stream = "pool stream"
        self.free = [torch.empty(buffer_bytes, dtype=torch.uint8) for _ in range(3)]
        self.out = 0

    def acquire(self):
        self.out += 1
        return self.free.pop()

    def release(self, buf, ev):
        self.out -= 1
        self.free.append(buf)

    put_back = lambda self, buf: self.release(buf, None)  # noqa: E731


class _Event:
    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def query(self):
        return True


@pytest.fixture
def fake_cuda(monkeypatch):
    """torch.cuda stubbed; ``.streams``: the streams entered, in order;
    ``.pool(bytes)``: a FakePool; ``.executor(n)``: a thread pool."""
    streams = []

    def stream(s):
        streams.append(s)
        return contextlib.nullcontext()

    monkeypatch.setattr(torch.cuda, "device", lambda d: contextlib.nullcontext())
    monkeypatch.setattr(torch.cuda, "stream", stream)
    monkeypatch.setattr(torch.cuda, "default_stream", lambda d=None: None)
    monkeypatch.setattr(torch.cuda, "Event", _Event)
    monkeypatch.setattr(torch.Tensor, "record_stream", lambda self, s: None)
    return SimpleNamespace(streams=streams, pool=FakePool, executor=ThreadPoolExecutor)
