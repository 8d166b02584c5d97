"""The order of exchange steps in a distributed plan: which exchanges may run
their rounds while their input is still being read.

Every rank must start the same collectives in the same order. An exchange in
rounds (:mod:`glint.distributed.rounds`: a shuffle, a gather, an adaptive or
skew join's probe shuffle) takes a step between the batches it reads; if its input can
take steps of its own after its first batch (another exchange in rounds
below it in the same pipeline, or a UNION ALL whose second input starts an
exchange once the first is read), the two would interleave differently on
each rank. :func:`late_steps` finds such inputs and :func:`settle` makes the
exchanges above them read their input to its end first (``hold_input``). A
LIMIT above an exchange reads its input to the end (``drain``): it must not
stop one rank's steps early while the others go on.

>>> import torch
>>> from glint.columnar import types as T
>>> from glint.exec.filter import FilterExec
>>> from glint.exec.scan import ScanExec
>>> from glint.plan.expr import ColRef, Field
>>> from glint.distributed.gather import GatherExec
>>> from glint.distributed.shuffle import ShuffleExec
>>> k = ColRef(Field(1, "k", T.BIGINT))
>>> scan = ScanExec("t", ("k",), (k.field,))
>>> plan = settle(GatherExec(FilterExec(ShuffleExec(scan, (k,)), k), 10), round_bytes=4096)
>>> plan.hold_input, plan.child.child.hold_input, plan.child.child.round_bytes
(True, False, 4096)
>>> late_steps(scan), late_steps(plan.child)
(False, True)
"""

from __future__ import annotations

import dataclasses
import functools

from glint.distributed.adaptive_join import AdaptiveJoinExec
from glint.distributed.gather import GatherExec
from glint.distributed.shuffle import ShuffleExec
from glint.distributed.skew_join import SkewJoinExec
from glint.exec.base import PhysicalNode
from glint.exec.join import JoinExec
from glint.exec.limit import LimitExec
from glint.exec.set_ops import SetOpExec


def has_exchange(node: PhysicalNode) -> bool:
    """Whether the subtree takes a step with the other ranks."""
    return getattr(node, "exchange", False) or any(has_exchange(c) for c in node.children)


@functools.singledispatch
def late_steps(node: PhysicalNode) -> bool:
    """Whether reading the node's output may take exchange steps after its
    first batch. A pipeline breaker reads its inputs to their end before its
    first batch; other operators pass their inputs' steps on."""
    if node.breaker:
        return False
    return any(late_steps(c) for c in node.children)


@late_steps.register
def _(node: ShuffleExec) -> bool:
    return True


@late_steps.register
def _(node: GatherExec) -> bool:
    return True


@late_steps.register
def _(node: JoinExec) -> bool:
    return late_steps(node.left if node.build_right else node.right)  # the probe streams


@late_steps.register
def _(node: AdaptiveJoinExec) -> bool:
    probe_keys = node.left_shuffle if node.build_right else node.right_shuffle
    return probe_keys is not None or late_steps(node.left if node.build_right else node.right)


@late_steps.register
def _(node: SkewJoinExec) -> bool:
    return True  # its probe's shuffle runs in rounds


@late_steps.register
def _(node: SetOpExec) -> bool:
    if node.kind == "union" and node.all:  # the right input starts once the left one is read
        return late_steps(node.left) or has_exchange(node.right)
    return False


def settle(node: PhysicalNode, round_bytes: int = 0) -> PhysicalNode:
    """The plan with each exchange in rounds set to hold its input where that
    input has late steps, its round size set (0: each rank's own), and each
    LIMIT over an exchange set to drain its input."""
    changes = {}
    for name in ("child", "left", "right"):
        c = getattr(node, name, None)
        if isinstance(c, PhysicalNode):
            s = settle(c, round_bytes)
            if s is not c:
                changes[name] = s
    if changes:
        node = dataclasses.replace(node, **changes)
    if isinstance(node, (ShuffleExec, GatherExec)):
        node = dataclasses.replace(node, hold_input=late_steps(node.child), round_bytes=round_bytes)
    elif isinstance(node, AdaptiveJoinExec):
        node = dataclasses.replace(
            node, hold_probe=late_steps(node.left if node.build_right else node.right), round_bytes=round_bytes
        )
    elif isinstance(node, SkewJoinExec):
        node = dataclasses.replace(
            node, hold_left=late_steps(node.left), hold_right=late_steps(node.right), round_bytes=round_bytes
        )
    elif isinstance(node, LimitExec) and has_exchange(node.child):
        node = dataclasses.replace(node, drain=True)
    return node
