"""Generate (or find already generated) benchmark data as Parquet files:

    python3 bench/device/gendata.py tpch|ssb SF [SF ...] [--generator tpchgen|dbgen]

Each scale factor's tables go to ``$GLINT_DATA/<suite>/sf<SF>`` (default
``~/.cache/glint/...``), the directories ``glint bench`` and ``glint tpch`` read,
so a later run reuses them. TPC-H is written by tpchgen-cli (``--generator
dbgen``: DuckDB's dbgen, whose data the official answer sets were made from);
SSB by glint's own generator (glint.workloads.ssb). A directory that is there
but incomplete is an error, not overwritten. Prints one line per scale factor:
the directory, its size and the seconds it took."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from glint.workloads import ssb, tpch


def generate(suite: str, sf: float, generator: str) -> Path:
    if suite == "ssb":
        return ssb.ensure_ssb_data(sf, progress=False)
    if generator == "dbgen":
        return tpch.ensure_dbgen_data(sf, progress=False)
    return tpch.ensure_tpch_data(sf, progress=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/device/gendata.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", choices=["tpch", "ssb"])
    ap.add_argument("sf", type=float, nargs="+", help="scale factors")
    ap.add_argument(
        "--generator",
        choices=["tpchgen", "dbgen"],
        default="tpchgen",
        help="TPC-H only: tpchgen-cli (default) or DuckDB's dbgen",
    )
    args = ap.parse_args(argv)
    if args.suite == "ssb" and args.generator != "tpchgen":
        ap.error("--generator applies to tpch only")
    for sf in args.sf:
        t0 = time.perf_counter()
        d = generate(args.suite, sf, args.generator)
        size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
        print(f"{args.suite} SF {sf:g}: {d} ({size / 1e9:.2f} GB, {time.perf_counter() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
