"""How a relation's rows are spread over the ranks of a distributed plan.

- ``partitioned``: each row on exactly one rank, no rule saying which (a table
  split into row ranges);
- ``hash(keys)``: each row on the rank ``partition_of(hash_columns(keys), N)``
  (:mod:`glint.exec.hashing`), so equal keys share a rank;
- ``replicated``: every rank holds every row;
- ``single``: the relation is rank 0's rows; what other ranks hold there is
  not part of it (after a gather, an aggregate of no rows there still makes
  its one row; exchanges and :class:`~glint.distributed.local.RootOnlyExec` ignore it).

>>> from glint.columnar import types as T
>>> from glint.plan.expr import ColRef, Field
>>> k = ColRef(Field(3, "o_orderkey", T.BIGINT))
>>> hashed((k,)), REPLICATED, hashed((k,)) == hashed((k,))
(hash(o_orderkey#3), replicated, True)
>>> hashed((k,)).spread, SINGLE.spread, REPLICATED.whole
(True, False, True)
"""

from __future__ import annotations

from dataclasses import dataclass

from glint.plan.expr import Expr


@dataclass(frozen=True, slots=True)
class Distribution:
    kind: str  # partitioned | hash | replicated | single
    keys: tuple[Expr, ...] = ()

    def __repr__(self) -> str:
        if self.kind == "hash":
            return f"hash({', '.join(map(repr, self.keys))})"
        return self.kind

    @property
    def spread(self) -> bool:
        """Rows split over the ranks (partitioned or hash)."""
        return self.kind in ("partitioned", "hash")

    @property
    def whole(self) -> bool:
        """Rank 0 holds every row (replicated or single)."""
        return self.kind in ("replicated", "single")


PARTITIONED = Distribution("partitioned")
REPLICATED = Distribution("replicated")
SINGLE = Distribution("single")


def hashed(keys) -> Distribution:
    return Distribution("hash", tuple(keys))
