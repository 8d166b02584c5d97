"""The benchmarks ``glint bench`` runs (TPC-H, SSB and TPC-DS): their query names,
texts and data, the ``--queries`` syntax, and the tables a query reads."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import sqlglot
import sqlglot.expressions as exp

from glint.cli.common import parse_query_list
from glint.errors import GlintError
from glint.workloads import tpch

BENCHMARKS = ("tpch", "ssb", "tpcds")


@dataclass(frozen=True)
class Suite:
    key: str  # "tpch" | "ssb" | "tpcds"
    title: str  # "TPC-H" | "SSB" | "TPC-DS"
    names: tuple[str, ...]  # all query names, in order
    query: Callable[[str], str]  # name -> SQL
    ensure_data: Callable[..., Path]  # (sf, progress=) -> directory of Parquet files
    label: Callable[[str], str]  # name -> "Q01" / "Q1.1"
    parse: Callable[[str | None], list[str]]  # --queries text -> names
    partition_keys: dict = field(default_factory=dict)  # table -> column for --hash-partition


def get_suite(key: str) -> Suite:
    """The benchmark named ``key`` ("tpch", "ssb" or "tpcds")."""
    if key == "tpch":
        names = tuple(str(n) for n in range(1, tpch.NUM_QUERIES + 1))

        def parse(text):
            return [str(n) for n in parse_query_list(text)]

        return Suite(
            "tpch",
            "TPC-H",
            names,
            lambda n: tpch.tpch_query(int(n)),
            lambda sf, progress=True: tpch.ensure_tpch_data(sf, progress=progress),
            lambda n: f"Q{int(n):02d}",
            parse,
            tpch.PARTITION_KEYS,
        )
    if key == "ssb":
        try:
            from glint.workloads import ssb  # an optional part of an installation
        except ModuleNotFoundError as e:
            if e.name and e.name.endswith("ssb"):
                raise GlintError(
                    "the SSB benchmark (glint.workloads.ssb) is not part of this glint installation"
                ) from None
            raise GlintError(f"the SSB benchmark cannot be loaded: {e}") from None
        names = tuple(ssb.ssb_queries())
        return Suite(
            "ssb",
            "SSB",
            names,
            ssb.ssb_query,
            lambda sf, progress=True: ssb.ensure_ssb_data(sf, progress=progress),
            lambda n: f"Q{n}",
            lambda text: parse_query_names(text, names, "SSB"),
        )
    if key == "tpcds":
        from glint.workloads import tpcds

        names = tuple(str(n) for n in range(1, tpcds.NUM_QUERIES + 1))
        return Suite(
            "tpcds",
            "TPC-DS",
            names,
            lambda n: tpcds.tpcds_query(int(n)),
            lambda sf, progress=True: tpcds.ensure_tpcds_data(sf, progress=progress),
            lambda n: f"Q{int(n):02d}",
            lambda text: parse_query_names(text, names, "TPC-DS"),
        )
    raise GlintError(f"unknown benchmark {key!r}: use one of {', '.join(BENCHMARKS)}")


def parse_query_names(text: str | None, names, title: str = "the benchmark") -> list[str]:
    """Query names out of '1.1,3.2', flights ('2' = 2.1, 2.2, ...), ranges
    ('1.2-2.1', in benchmark order); None or '' -> all.

    >>> n = ("1.1", "1.2", "1.3", "2.1", "2.2")
    >>> parse_query_names("q2, 1.2-1.3", n), parse_query_names(None, n) == list(n)
    (['2.1', '2.2', '1.2', '1.3'], True)
    """
    names = list(names)
    if text is None or not text.strip():
        return names
    lower = [n.lower() for n in names]

    def one(item: str) -> list[str]:
        item = item.strip().lower()
        item = item[1:] if item.startswith("q") else item
        if item in lower:
            return [names[lower.index(item)]]
        flight = [n for n, lo in zip(names, lower) if lo.startswith(item + ".")]
        if flight:
            return flight
        raise GlintError(f"there is no {title} query {item!r}: the queries are {', '.join(names)}")

    out: list[str] = []
    for part in text.split(","):
        if not part.strip():
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            lo, hi = one(a), one(b)
            i, j = names.index(lo[0]), names.index(hi[-1])
            if i > j:
                raise GlintError(f"empty query range {part.strip()!r}")
            picked = names[i : j + 1]
        else:
            picked = one(part)
        out.extend(n for n in picked if n not in out)
    if not out:
        raise GlintError(f"invalid query list {text!r}")
    return out


# ------------------------------------------------------------------ tables a query reads
def query_tables(sql: str, tables) -> list[str]:
    """The names among ``tables`` that ``sql`` reads (its table references;
    CTE and view names are not in ``tables``), in the order of ``tables``.

    >>> query_tables("WITH x AS (SELECT * FROM t) SELECT * FROM x, u", ["t", "u", "v"])
    ['t', 'u']
    """
    tables = list(tables)
    lower = {t.lower() for t in tables}
    try:
        refs = {
            t.name.lower() for s in sqlglot.parse(sql, read="duckdb") if s is not None for t in s.find_all(exp.Table)
        }
    except Exception:  # noqa: BLE001 - unparsable here (glint will say why): every table named in it
        refs = set(re.findall(r"[a-z_][a-z0-9_]*", sql.lower())) & lower
    return [t for t in tables if t.lower() in refs]
