"""Skewed join keys: a shuffled hash join that keeps one side's rows of its
heaviest keys where they are and sends the other side's rows of those keys
to every rank (partial redistribution, partial broadcast: PRPD).

A shuffle sends every row to the rank its keys hash to, so a key that holds
a large share of a side puts all of those rows on one rank, and that rank's
share sets the join's time. Where both sides of a join are shuffled on its
keys, the *kept* side is chosen at planning (:func:`kept_side`) and each
rank:

1. reads the first :data:`SAMPLE_ROWS` rows of its kept input (whole
   chunks; they stream on into the shuffle afterwards, nothing is read
   twice) and counts their key hashes (:func:`candidates`);
2. posts its sampled row count and its most frequent hashes in one size
   exchange, so that every rank sees the same posts and agrees on one set
   of heavy hashes (:func:`find_heavy`): those holding more than
   1 / (:data:`HEAVY_SHARE` x N) of all sampled rows, i.e. more than an
   eighth of a rank's fair share, at most :data:`MAX_HEAVY` of them, and
   none when fewer than :data:`MIN_SAMPLE_ROWS` rows were sampled;
3. shuffles the kept side: a row whose key hash is heavy stays on this
   rank, the others go to the rank their keys hash to (:func:`kept_split`);
4. shuffles the other side: a row whose key hash is heavy goes to every
   rank (repeated once per destination in the same all-to-all), the others
   where they hash to (:func:`copied_split`);
5. joins as :class:`~glint.exec.join.JoinExec` does, building the side it
   would build anyway.

Every kept row meets every other-side row with its key on exactly one rank:
a kept row is on one rank, and the other side's rows of its key are either
all on the rank its key hashes to (where the kept row is too, unless its
hash is heavy) or on every rank (when it is). This holds for any set of
hashes, so a hash collision or a key the sample missed costs balance, never
correctness. NULL keys hash as in a plain shuffle (a key with a NULL is
never counted as heavy), and a row with a NULL key matches nothing wherever
it goes.

Where it applies: the other side's rows of a heavy key are on every rank, so
the join must never emit or test one of them on its own. The kept side is
the one a LEFT, SEMI, ANTI or single-row (scalar subquery) join keeps or
tests per row (the left), a RIGHT join's right, and an inner join's probe.
Never a FULL join (both sides' unmatched rows are emitted), a mark join, or
a NOT IN / IN (null-aware) join (each outer row depends on all inner rows).

The join's output is then not hash-partitioned on its keys any more: the
planner records it as ``partitioned`` (:mod:`glint.distributed.planner`).
With no heavy keys, the rows move as in a plain shuffle; the detection
costs the sample's hashing and one size exchange. The decision is a record
of kind ``decision`` in ``Result.rank_stats`` (``detail``: the heavy keys'
shares of the sample, the sampled rows, and this rank's rows kept and rows
sent to every rank) and a note in EXPLAIN ANALYZE.

>>> import torch
>>> from glint.columnar import types as T
>>> from glint.columnar.column import Batch, Column
>>> from glint.plan.expr import ColRef, Field
>>> k = ColRef(Field(1, "k", T.BIGINT))
>>> b = Batch({1: Column(T.BIGINT, torch.tensor([7, 7, 7, 1, 7, 2]))}, 6)
>>> n, top = candidates([b], (k,), limit=1)
>>> n, [c for _, c in top]
(6, [4])
>>> d = find_heavy([(3000, top), (3000, ())], ranks=2)
>>> len(d["heavy"]), d["choice"]
(0, 'no heavy keys')
>>> d = find_heavy([(3000, ((top[0][0], 1000),)), (3000, ((top[0][0], 200),))], ranks=2)
>>> d["heavy"] == [top[0][0]], d["shares"], d["choice"]
(True, [0.2], '1 heavy key')
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from glint.columnar.column import Batch, slice_batch
from glint.distributed.exchange import by_destination, communicator
from glint.distributed.rounds import held_input
from glint.distributed.shuffle import hash_split, shuffle_rounds
from glint.distributed.stats import ExchangeStats, describe_skew
from glint.exec.hashing import hash_columns, partition_of
from glint.exec.join import JoinExec
from glint.functions.evaluate import evaluate
from glint.plan.expr import Expr

HEAVY_SHARE = 8  # heavy: more than 1 / (HEAVY_SHARE x ranks) of the sampled rows
MAX_HEAVY = 64  # heavy keys at most (the most frequent)
SAMPLE_ROWS = 1 << 16  # rows of the kept side per rank whose keys are counted
MIN_SAMPLE_ROWS = 1024  # fewer sampled rows over all ranks: no heavy keys


def kept_side(kind: str, build_right: bool, null_aware) -> str | None:
    """The side whose heavy keys stay ("left" or "right"), or None where the
    join does not allow it. The other side's rows of those keys meet the
    kept rows on every rank, so the join must never emit or test one of
    them on its own: the kept side is the one a LEFT, SEMI, ANTI or
    single-row join keeps or tests per row (the left), a RIGHT join's right,
    and an inner join's probe; never a FULL, mark or null-aware (NOT IN /
    IN) join. Which side the join builds does not matter otherwise.

    >>> kept_side("inner", True, None), kept_side("inner", False, None), kept_side("left", False, None)
    ('left', 'right', 'left')
    >>> kept_side("right", True, None), kept_side("full", True, None), kept_side("mark", True, None)
    ('right', None, None)
    """
    if null_aware is not None:
        return None
    if kind == "inner":
        return "left" if build_right else "right"
    return {"left": "left", "semi": "left", "anti": "left", "single": "left", "right": "right"}.get(kind)


def _key_hashes(batch: Batch, keys: tuple[Expr, ...]) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The rows' key hashes (as a shuffle computes them) and which rows have
    no NULL key (None: all)."""
    cols = [evaluate(k, batch) for k in keys]
    valid = None
    for c in cols:
        if c.valid is not None:
            valid = c.valid if valid is None else valid & c.valid
    return hash_columns(cols), valid


def candidates(batches: list[Batch], keys: tuple[Expr, ...], limit: int = 2 * MAX_HEAVY):
    """(the sampled rows, the ``limit`` most frequent key hashes among those
    without a NULL key, each with its count: ((hash, count), ...))."""
    total = sum(b.num_rows for b in batches)
    hashes = []
    for b in batches:
        if b.num_rows:
            h, valid = _key_hashes(b, keys)
            hashes.append(h if valid is None else h[valid])
    if not hashes:
        return total, ()
    values, counts = torch.unique(torch.cat(hashes), return_counts=True)
    top = torch.topk(counts, min(limit, len(counts)))
    return total, tuple(zip(values[top.indices].tolist(), top.values.tolist()))


def find_heavy(posts: list, ranks: int) -> dict:
    """The heavy key hashes from every rank's (sampled rows, candidates), the
    same posts on every rank and so the same set, as the record the
    statistics and EXPLAIN ANALYZE show."""
    total = sum(n for n, _ in posts)
    counts: Counter = Counter()
    for _, cands in posts:
        for h, c in cands:
            counts[h] += c
    threshold = total / (HEAVY_SHARE * ranks)
    heavy = []
    if total >= MIN_SAMPLE_ROWS:
        heavy = sorted((h for h, c in counts.items() if c > threshold), key=lambda h: (-counts[h], h))[:MAX_HEAVY]
    n = len(heavy)
    return {
        "decision": "skew",
        "choice": f"{n} heavy key{'' if n == 1 else 's'}" if n else "no heavy keys",
        "heavy": heavy,
        "shares": [round(counts[h] / total, 4) for h in heavy],
        "sampled": total,
        "threshold": threshold,
        "ranks": ranks,
        "kept": 0,  # this rank's rows of heavy keys on the kept side, which stayed
        "copied": 0,  # this rank's rows of heavy keys on the other side, sent to every rank
    }


def kept_split(keys: tuple[Expr, ...], heavy: torch.Tensor, rank: int, ranks: int, kept: list) -> Callable:
    """The kept side's grouping: rows of heavy key hashes stay on ``rank``,
    the others go to the rank their keys hash to. Each batch's count of rows
    kept is appended to ``kept`` as a tensor (read once, when the join is
    done: no host synchronisation per batch for a statistic)."""

    def split(batch: Batch) -> tuple[Batch, list[int]]:
        if not batch.num_rows:
            return batch, [0] * ranks
        h, _ = _key_hashes(batch, keys)
        hot = torch.isin(h, heavy)
        kept.append(hot.sum())
        dest = torch.where(hot, torch.full_like(h, rank), partition_of(h, ranks))
        return by_destination(batch, dest, ranks)

    return split


def copied_split(keys: tuple[Expr, ...], heavy: torch.Tensor, ranks: int, detail: dict) -> Callable:
    """The other side's grouping: rows of heavy key hashes go to every rank
    (repeated once per rank in the one all-to-all), the others to the rank
    their keys hash to."""

    def split(batch: Batch) -> tuple[Batch, list[int]]:
        if not batch.num_rows:
            return batch, [0] * ranks
        h, _ = _key_hashes(batch, keys)
        hot = torch.isin(h, heavy)
        rows = hot.nonzero().squeeze(1)
        if not len(rows):
            return by_destination(batch, partition_of(h, ranks), ranks)
        detail["copied"] += len(rows)
        cold = (~hot).nonzero().squeeze(1)
        every = torch.arange(ranks, dtype=torch.int64, device=h.device).repeat_interleave(len(rows))
        dest = torch.cat([partition_of(h[cold], ranks), every])
        return by_destination(batch.take(torch.cat([cold, rows.repeat(ranks)])), dest, ranks)

    return split


def _sample(inp: Iterator[Batch], rows: int) -> tuple[list[Batch], Iterator[Batch]]:
    """The input's first ``rows`` rows (fewer when it has fewer), and the
    whole input again as a stream: the chunks read stay as they are."""
    inp = iter(inp)
    got, n = [], 0
    for b in inp:
        got.append(b)
        n += b.num_rows
        if n >= rows:
            break
    sample, left = [], rows
    for b in got:
        sample.append(b if b.num_rows <= left else slice_batch(b, 0, left))
        left -= sample[-1].num_rows
    return sample, itertools.chain(got, inp)


def _detect(node: JoinExec, comm, kept: Iterator[Batch], keys, side: str) -> tuple[dict, Iterator[Batch]]:
    """The ranks' heavy keys (the decision record, recorded) and the kept
    side's input again."""
    t0 = time.perf_counter()
    sample, kept = _sample(kept, SAMPLE_ROWS)
    posts, wait_s = comm.sync(candidates(sample, keys), f"{node.describe()}: heavy keys")
    d = find_heavy(posts, comm.size) | {"kept_side": side}
    rec = ExchangeStats(comm.step, "decision", node.describe(), wait_s=wait_s, detail=d)
    rec.seconds = time.perf_counter() - t0 - wait_s
    comm.stats.record(rec)
    return d, kept


def skew_join(
    node: JoinExec,
    ctx,
    left: Iterator[Batch],
    right: Iterator[Batch],
    left_keys: tuple[Expr, ...],
    right_keys: tuple[Expr, ...],
    *,
    kept: str,
    round_bytes: int = 0,
    hold_left: bool = False,
    hold_right: bool = False,
) -> Iterator[Batch]:
    """``node``'s rows from its unexchanged inputs: the ``kept`` side's heavy
    keys found, both sides shuffled around them, and the join of what this
    rank then holds. ``hold_left`` / ``hold_right``: that input may take
    exchange steps after its first chunk, so it is read to its end (and
    held) before it is shuffled, and the kept side before the detection
    (:func:`glint.distributed.steps.settle`)."""
    comm = communicator(ctx, node)
    inputs = {"left": left, "right": right}
    keys = {"left": left_keys, "right": right_keys}
    hold = {"left": hold_left, "right": hold_right}
    other = "right" if kept == "left" else "left"
    release = None
    try:
        if hold[kept]:
            inputs[kept], release = held_input(ctx, inputs[kept], True, f"{node.describe()[:60]} (input held)")
            hold[kept] = False
        d, inputs[kept] = _detect(node, comm, inputs[kept], keys[kept], kept)
        splits = {s: (hash_split(keys[s], comm.size), "") for s in inputs}
        kept_rows: list[torch.Tensor] = []
        if d["heavy"]:
            heavy = torch.tensor(d["heavy"], dtype=torch.int64, device=ctx.device)
            splits[kept] = (kept_split(keys[kept], heavy, comm.rank, comm.size, kept_rows), ", heavy keys stay")
            splits[other] = (copied_split(keys[other], heavy, comm.size, d), ", heavy keys to every rank")
        moved = {
            s: shuffle_rounds(
                ctx,
                comm,
                inputs[s],
                splits[s][0],
                f"Shuffle hash({', '.join(map(repr, keys[s]))}){splits[s][1]}",
                round_bytes=round_bytes,
                hold=hold[s],
            )
            for s in inputs
        }
        try:
            yield from JoinExec.stream(node, ctx, moved["left"], moved["right"])
        finally:  # (also when a LIMIT above stops the join early)
            d["kept"] = int(torch.stack(kept_rows).sum()) if kept_rows else 0
        ctx.note(node, "skew: " + describe_skew(d))
    finally:
        if release is not None:
            release()


@dataclass(frozen=True, slots=True, eq=False)
class SkewJoinExec(JoinExec):
    """A hash join whose inputs arrive unexchanged and are shuffled on the
    join keys here, around the heavy keys of its ``kept`` side (see the
    module doc). It builds the ``build_right`` side."""

    left_shuffle: tuple[Expr, ...] = ()
    right_shuffle: tuple[Expr, ...] = ()
    kept: str = "left"  # the side whose heavy keys stay (kept_side)
    round_bytes: int = 0  # the shuffles' rounds (0: from the rank's memory budget)
    hold_left: bool = False  # an input read to its end before it is shuffled (steps.settle)
    hold_right: bool = False
    exchange = True  # a step every rank takes together (see steps.has_exchange)

    @classmethod
    def of(cls, join: JoinExec, **skew) -> SkewJoinExec:
        return cls(**{f.name: getattr(join, f.name) for f in dataclasses.fields(JoinExec)}, **skew)

    def describe(self):
        moves = ", ".join(
            f"{name} on ({', '.join(map(repr, keys))})"
            for name, keys in (("left", self.left_shuffle), ("right", self.right_shuffle))
        )
        return (
            "Skew" + JoinExec.describe(self).removeprefix("Equi") + f": shuffle {moves}, {self.kept}'s heavy keys stay"
        )

    def stream(self, ctx, left, right):
        yield from skew_join(
            self,
            ctx,
            left,
            right,
            self.left_shuffle,
            self.right_shuffle,
            kept=self.kept,
            round_bytes=self.round_bytes,
            hold_left=self.hold_left,
            hold_right=self.hold_right,
        )
