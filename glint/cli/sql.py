"""``glint sql``: run one query and print its result."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from glint.cli.common import (
    EXIT_OK,
    collect_sources,
    connect_from_args,
    console,
    register_sources,
    render_table,
    sync,
)
from glint.cli.running import run_query
from glint.errors import GlintError, GlintIOError


# ------------------------------------------------------------------ glint sql
def cmd_sql(args) -> int:
    out = console()
    query = args.query
    if args.file:
        try:
            query = Path(args.file).read_text()
        except OSError as e:
            raise GlintIOError(f"cannot read {args.file!r}: {e.strerror or e}") from None
    elif query is None or query == "-":
        query = sys.stdin.read()
    if not query or not query.strip():
        raise GlintError("no SQL given")
    sources = collect_sources(args.parquet, args.csv)
    con = connect_from_args(args.device, args)
    register_sources(con, sources)
    t0 = time.perf_counter()
    if args.explain:
        res = con.sql(query)
        text = res.explain()
        if text is not None:
            print(text)
        return EXIT_OK
    res, tbl = run_query(con, query)  # (Ctrl-C cancels it: glint.Interrupted, exit status 130)
    sync(con)
    elapsed = time.perf_counter() - t0
    if tbl is not None:
        out.print(render_table(tbl, max_rows=args.max_rows))
    if args.timer:
        out.print(f"Run time: {elapsed:.3f} s", style="dim")
        if getattr(res, "rank_stats", None):
            from glint.distributed.stats import format_rank_stats

            out.print(format_rank_stats(res.rank_stats), style="dim", markup=False)
    return EXIT_OK
