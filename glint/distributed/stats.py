"""Where a distributed query's time and bytes went, per rank.

Each exchange records its kind (shuffle, broadcast, gather), the time spent
waiting for the other ranks to reach it (``wait_s``: skew or a slow rank), the
time of its own work (packing, the collectives, unpacking: ``seconds``), and
the rows, bytes and messages it sent and received (a message is one
rank-to-rank transfer of a non-empty buffer; the size exchange through the
store is not counted); an exchange in rounds (glint.distributed.rounds) is one
record with its number of ``rounds`` and the ``round_bytes`` it took per
round. An adaptive join's run-time choice is a record of kind ``decision``
whose ``detail`` holds the sizes it saw and what it chose
(glint.distributed.adaptive_join); so is a shuffled join's set of heavy
keys, with the rows it kept or sent to every rank
(glint.distributed.skew_join). A rank's ``compute_s`` is its run time less its
exchanges' time and waits.

>>> s = RankStats(1)
>>> s.record(ExchangeStats(1, "shuffle", "Shuffle hash(a#1)", seconds=0.25, wait_s=0.5, bytes_sent=100,
...                        bytes_received=60, messages_sent=2, messages_received=1))
>>> s.finish(2.0)
>>> d = s.as_dict(); d["compute_s"], d["shuffle_s"], d["wait_s"], d["bytes_sent"]
(1.25, 0.25, 0.5, 100)
>>> summary([d, RankStats(0).as_dict()])["shuffle_s"]
0.25
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

KINDS = ("shuffle", "broadcast", "gather", "allreduce")  # "decision" records take no time of their own


@dataclass
class ExchangeStats:
    step: int
    kind: str  # shuffle | broadcast | gather | allreduce | decision
    op: str  # the operator, as EXPLAIN shows it
    rows_sent: int = 0
    rows_received: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0
    messages_sent: int = 0
    messages_received: int = 0
    seconds: float = 0.0  # packing, collectives, unpacking
    wait_s: float = 0.0  # waiting for the other ranks to reach the exchange
    rounds: int = 1  # steps it took (an exchange in rounds: one per round)
    round_bytes: int = 0  # input bytes per round (0: one step over the whole input)
    detail: dict | None = None  # a decision's sizes and choice


@dataclass
class RankStats:
    rank: int
    total_s: float = 0.0
    exchanges: list = field(default_factory=list)
    io: dict | None = None  # the rank's data movement (ExecContext.io)

    def record(self, ex: ExchangeStats) -> None:
        self.exchanges.append(ex)

    def finish(self, total_s: float, io: dict | None = None) -> None:
        self.total_s = total_s
        self.io = io

    def as_dict(self) -> dict:
        ex = self.exchanges
        out = {"rank": self.rank, "total_s": self.total_s}
        for k in KINDS:
            out[f"{k}_s"] = sum(e.seconds for e in ex if e.kind == k)
        out["wait_s"] = sum(e.wait_s for e in ex)
        out["compute_s"] = max(0.0, self.total_s - sum(out[f"{k}_s"] for k in KINDS) - out["wait_s"])
        for k in ("bytes_sent", "bytes_received", "messages_sent", "messages_received"):
            out[k] = sum(getattr(e, k) for e in ex)
        out["exchanges"] = [asdict(e) for e in ex]
        out["io"] = self.io
        return out


def summary(rank_stats: list[dict]) -> dict:
    """One query's breakdown over its ranks: the slowest rank's time per
    category (ranks run side by side) and the total traffic."""
    if not rank_stats:
        return {}
    out = {"ranks": len(rank_stats)}
    for k in ("total_s", "compute_s", "wait_s") + tuple(f"{k}_s" for k in KINDS):
        out[k] = max(r[k] for r in rank_stats)
    for k in ("bytes_sent", "messages_sent"):
        out[k] = sum(r[k] for r in rank_stats)
    ex = rank_stats[0]["exchanges"]
    out["exchanges"] = sum(1 for e in ex if e["kind"] != "decision")
    out["rounds"] = sum(e.get("rounds", 1) for e in ex if e["kind"] != "decision")
    out["decisions"] = [e["detail"]["choice"] for e in ex if e["kind"] == "decision" and e.get("detail")]
    return out


def format_rank_stats(rank_stats: list[dict]) -> str:
    """A per-rank table for EXPLAIN ANALYZE and the command line."""
    head = (
        f"{'rank':>4} {'total s':>9} {'compute s':>9} {'shuffle s':>9} {'bcast s':>9} {'gather s':>9} "
        f"{'reduce s':>9} {'wait s':>9} {'sent':>11} {'received':>11} {'msgs':>6}"
    )
    lines = ["Ranks:", head]
    for r in rank_stats:
        lines.append(
            f"{r['rank']:>4} {r['total_s']:>9.4f} {r['compute_s']:>9.4f} {r['shuffle_s']:>9.4f} "
            f"{r['broadcast_s']:>9.4f} {r['gather_s']:>9.4f} {r['allreduce_s']:>9.4f} {r['wait_s']:>9.4f} "
            f"{_bytes(r['bytes_sent']):>11} {_bytes(r['bytes_received']):>11} {r['messages_sent']:>6}"
        )
    ex = rank_stats[0]["exchanges"] if rank_stats else []
    if ex:
        lines.append("Exchanges (rows sent / received, summed over ranks):")
        for i, e in enumerate(ex):
            if e["kind"] == "decision":
                d = _over_ranks(rank_stats, i, e.get("detail"))
                lines.append(f"  {e['step']:>3}. decision  {e['op'][:70]}: {describe_decision(d)}")
                continue
            sent = sum(r["exchanges"][i]["rows_sent"] for r in rank_stats if i < len(r["exchanges"]))
            got = sum(r["exchanges"][i]["rows_received"] for r in rank_stats if i < len(r["exchanges"]))
            moved = sum(r["exchanges"][i]["bytes_sent"] for r in rank_stats if i < len(r["exchanges"]))
            rounds = f" in {e['rounds']} rounds of {_bytes(e['round_bytes'])}" if e.get("round_bytes") else ""
            lines.append(
                f"  {e['step']:>3}. {e['kind']:<9} {sent:>12,} / {got:<12,} {_bytes(moved):>11} "
                f"between ranks{rounds}  {e['op'][:70]}"
            )
    return "\n".join(lines)


def _over_ranks(rank_stats: list[dict], i: int, d: dict | None) -> dict | None:
    """Decision ``i``'s detail with a skew decision's rows kept and sent
    summed over the ranks (each rank counts its own)."""
    if not d or d.get("decision") != "skew":
        return d
    out = dict(d)
    for k in ("kept", "copied"):
        out[k] = sum((r["exchanges"][i].get("detail") or {}).get(k, 0) for r in rank_stats if i < len(r["exchanges"]))
    return out


def describe_skew(d: dict) -> str:
    """A skew decision (glint.distributed.skew_join) in a line.

    >>> d = {"choice": "2 heavy keys", "shares": [0.31, 0.12], "sampled": 4000, "threshold": 125.0,
    ...      "kept_side": "left", "kept": 1720, "copied": 2}
    >>> describe_skew(d)
    '2 heavy keys of left (31.0%, 12.0% of 4,000 sampled rows); 1,720 rows of the left kept, 2 rows of the right to every rank'
    >>> describe_skew(d | {"choice": "no heavy keys", "shares": []})
    'no heavy keys of left (none over 125 of 4,000 sampled rows)'
    """
    side = d["kept_side"]
    if not d["shares"]:
        return f"{d['choice']} of {side} (none over {d['threshold']:,.0f} of {d['sampled']:,} sampled rows)"
    other = "right" if side == "left" else "left"
    shares = ", ".join(f"{s:.1%}" for s in d["shares"][:4]) + (", ..." if len(d["shares"]) > 4 else "")
    return (
        f"{d['choice']} of {side} ({shares} of {d['sampled']:,} sampled rows); "
        f"{_rows(d['kept'])} of the {side} kept, {_rows(d['copied'])} of the {other} to every rank"
    )


def describe_decision(d: dict | None) -> str:
    """An adaptive join's choice and the sizes it saw, in a line (a skew
    decision: :func:`describe_skew`).

    >>> describe_decision({"choice": "broadcast right", "side": "right", "rows": [3, 0], "bytes": [96, 0],
    ...                    "probe_rows_est": 1000, "broadcast_cost": 48.0, "shuffle_cost": 4024.0, "reason": "eq. 3"})
    'broadcast right (right: 3 rows, 96 B on the ranks [3, 0]; other side ~1,000 rows est.; broadcast 48 vs shuffle 4,024: eq. 3)'
    """
    if not d:
        return "?"
    if d.get("decision") == "skew":
        return describe_skew(d)
    return (
        f"{d['choice']} ({d['side']}: {sum(d['rows']):,} rows, {_bytes(sum(d['bytes']))} on the ranks "
        f"{d['rows']}; other side ~{d['probe_rows_est']:,} rows est.; broadcast {d['broadcast_cost']:,.0f} "
        f"vs shuffle {d['shuffle_cost']:,.0f}: {d['reason']})"
    )


def _rows(n: int) -> str:
    return f"{n:,} row" + ("" if n == 1 else "s")


def _bytes(n: int) -> str:
    from glint.runtime.memory import format_bytes

    return format_bytes(n)
