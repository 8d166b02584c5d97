"""Value checks that need not stop the device.

An overflow test on a GPU leaves a flag on the device, and reading it
(``bool(bad.any())``) waits for every kernel queued before it: the host
cannot queue the next chunk's work meanwhile, so a test per expression per
chunk turns a pipeline into a series of round trips. While a run collects
its checks (:data:`DEFERRED` holds a list: a single-process run on CUDA, see
glint.engine.connection), a test is queued instead. Its flag stays on the
device, the run goes on with the values as computed, and every flag is read
once, at the end (glint.exec.base.ExecContext.verify_checks), or as soon as
the run fails for another reason (wrong values may be why).

A raised flag voids the run (:class:`CheckRedo`). It is done again with
every check made where it arises: the run's error is then raised where it
should be, or the exact path taken. Where a generated kernel raised it
(glint.functions.fused_values), that kernel's source is evaluated node by
node for the rest of the process (:data:`UNFUSED`), so that data which
trips it pays for the second run once.

Only tests whose failure is an error or a fallback to a reference path are
queued: a test whose outcome changes how a value is represented (a result
widened to 128 bits) is made at once.

>>> import torch
>>> token = DEFERRED.set([])
>>> check(torch.tensor([False, True]), "Out of Range Error: Overflow in addition of INTEGER")
>>> len(DEFERRED.get())  # queued, not raised
1
>>> DEFERRED.reset(token)
>>> check(torch.tensor([False, True]), "Out of Range Error")
Traceback (most recent call last):
...
glint.errors.ExecutionError: Out of Range Error
"""

from __future__ import annotations

from contextvars import ContextVar

import torch

from glint.errors import ExecutionError

# the run's queued checks: a list of (device flag, message or None, generated source or
# None), or None where every check is made at once. Set by the executor around each
# operator's step (glint.exec.base.ExecContext._guard).
DEFERRED: ContextVar[list | None] = ContextVar("glint_deferred_checks", default=None)

# generated kernels' sources whose flag voided a run: evaluated node by node from then on
UNFUSED: set[str] = set()


class CheckRedo(Exception):
    """A run queued its value checks and one failed: the run is void and is
    done again with every check made where it arises. ``sources``: the
    generated kernels whose flags were raised (now in :data:`UNFUSED`)."""

    def __init__(self, sources: set[str]):
        super().__init__(f"{len(sources)} generated kernels" if sources else "an overflow test")
        self.sources = sources


def check(bad: torch.Tensor, message: str) -> None:
    """Raises ExecutionError(``message``) where any of ``bad`` holds: at
    once, or at the end of the run while it queues its checks."""
    queued = DEFERRED.get()
    if queued is not None:
        queued.append((bad.any(), message, None))
        return
    if bool(bad.any()):
        raise ExecutionError(message)


def queue_fallback(flag: torch.Tensor, source: str) -> bool:
    """Whether the run queues ``flag`` (a generated kernel's "a row might
    overflow"): then the kernel's values stand, and a raised flag re-runs
    the query with ``source`` evaluated node by node."""
    queued = DEFERRED.get()
    if queued is None:
        return False
    queued.append((flag.reshape(()) != 0, None, source))
    return True


def verify(queued: list) -> None:
    """Reads every queued flag in one transfer: raises CheckRedo where one
    is set (the sources of raised kernel flags go to :data:`UNFUSED`)."""
    if not queued:
        return
    # one transfer per device: a GPU run also queues tests of values it finishes on the host
    by_device: dict = {}
    for i, (f, _, _) in enumerate(queued):
        by_device.setdefault(f.device, []).append(i)
    flags = [False] * len(queued)
    for where in by_device.values():
        read = torch.stack([queued[i][0].reshape(()).to(torch.bool) for i in where]).tolist()
        for i, f in zip(where, read):
            flags[i] = f
    raised = [q for q, f in zip(queued, flags) if f]
    if not raised:
        return
    sources = {s for _, _, s in raised if s is not None}
    UNFUSED.update(sources)
    raise CheckRedo(sources)
