"""The ``glint`` command (``python -m glint``): ``sql``, ``shell``, ``serve``, ``tpch``,
``bench``, ``fuzz``; under ``torchrun`` with ``--ranks env``, rank 0 runs the command and the
other ranks serve it."""

from __future__ import annotations

import argparse
import os
import sys

from glint import __version__
from glint.cli.common import (
    EXIT_ERROR,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    add_rank_arguments,
    memory_arguments,
    print_error,
    print_internal,
)
from glint.cli.serve import add_arguments as serve_arguments
from glint.cli.serve import cmd_serve
from glint.cli.shell import cmd_shell
from glint.cli.sql import cmd_sql
from glint.cli.tpch import cmd_tpch
from glint.errors import GlintError, Interrupted


# ------------------------------------------------------------------ argument parsing
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="glint", description="glint: a SQL analytics engine on PyTorch tensors")
    p.add_argument("--version", action="version", version=f"glint {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def sources(sp, display: bool = True):
        sp.add_argument(
            "--parquet",
            action="append",
            metavar="DIR|FILE|NAME=PATH",
            help="register each Parquet file / subdirectory of DIR as a table named after it "
            "(or one file; NAME=PATH names it); repeatable",
        )
        sp.add_argument(
            "--csv",
            action="append",
            metavar="FILE|NAME=PATH",
            help="register a CSV file (a directory or glob of them) as a table named after it "
            "(NAME=PATH names it); repeatable",
        )
        sp.add_argument("--device", default="auto", help='"auto" (default), "cpu", "cuda" or "cuda:N"')
        if display:
            sp.add_argument("--max-rows", type=int, default=40, help="rows shown of a longer result (0: all)")
        memory_arguments(sp)
        add_rank_arguments(sp)

    s = sub.add_parser("sql", help="run one SQL query and print its result")
    s.add_argument("query", nargs="?", help="the SQL text ('-' or nothing: read it from stdin)")
    s.add_argument("-f", "--file", help="read the SQL from this file")
    s.add_argument("--explain", action="store_true", help="print the plan instead of running the query")
    s.add_argument("--timer", action="store_true", help="print the run time")
    sources(s)
    s.set_defaults(func=cmd_sql)

    sh = sub.add_parser("shell", help="interactive SQL shell")
    sources(sh)
    sh.set_defaults(func=cmd_shell)

    sv = sub.add_parser("serve", help="serve the tables over Arrow Flight SQL (ADBC, JDBC, pyarrow.flight clients)")
    serve_arguments(sv)
    sources(sv, display=False)
    sv.set_defaults(func=cmd_serve)

    t = sub.add_parser("tpch", help="run TPC-H and check the results against DuckDB and the official answers")
    t.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    t.add_argument("--device", default="auto", help='"auto" (default), "cpu", "cuda" or "cuda:N"')
    t.add_argument("--queries", help="e.g. 1,5,9 or 1-6 (default: all 22)")
    t.add_argument("--no-check", action="store_true", help="only time glint: no DuckDB run, no comparison")
    t.add_argument("--runs", type=int, default=1, help="runs per query; the best time is shown (default 1)")
    t.add_argument("--data", help="use the TPC-H Parquet files in this directory instead of the cache")
    t.add_argument(
        "--generator",
        choices=["tpchgen", "dbgen"],
        default="tpchgen",
        help="tpchgen (tpchgen-cli, default) or dbgen (DuckDB's dbgen, whose data the official "
        "answers were made from, so every column of every query is checked against them)",
    )
    memory_arguments(t)
    add_rank_arguments(t)
    t.add_argument(
        "--hash-partition",
        action="store_true",
        help="with --ranks: hash-partition the tables on their keys at load (lineitem and orders "
        "on the order key...), so joins on them need no exchange",
    )
    t.set_defaults(func=cmd_tpch)

    from glint.bench import harness

    b = sub.add_parser(
        "bench",
        help="benchmark TPC-H or SSB (glint warm and cold against DuckDB, results checked), or exchange (shuffle and broadcast against raw collectives)",
    )
    harness.add_arguments(b)
    b.set_defaults(func=harness.cmd_bench)
    bm = sub.add_parser("bench-merge", help="merge the JSON reports of one benchmark run in parts")
    bm.add_argument("reports", nargs="+", help="JSON reports written by glint bench")
    bm.add_argument("--out", help="output directory")
    bm.set_defaults(func=harness.cmd_merge)
    from glint.bench import model

    bmo = sub.add_parser(
        "bench-model",
        help="fit the performance model on a 1-GPU and a k-rank TPC-H report; predict other rank counts and hosts",
    )
    model.add_arguments(bmo)
    bmo.set_defaults(func=model.cmd_model)

    from glint.testing.fuzz.runner import add_parser as add_fuzz_parser  # glint fuzz

    add_fuzz_parser(sub)
    return p


def serve_torchrun_rank(args) -> int | None:
    """Under ``torchrun`` with ``--ranks env``, every process runs the same
    command line: rank 0 runs the command on a connection over all the ranks
    (None here), the other ranks serve it until it is done (their exit code)::

        torchrun --nnodes 2 --nproc-per-node 8 --node-rank 0 --rdzv-backend c10d \\
            --rdzv-endpoint host0:29500 -m glint tpch --sf 100 --device cuda --ranks env
    """
    if getattr(args, "ranks", None) != "env":
        return None
    from glint.distributed.connection import DEFAULT_TIMEOUT_S
    from glint.distributed.launch import join_torchrun, torchrun_env

    rank, _, _ = torchrun_env()
    if rank == 0:
        return None
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    try:
        join_torchrun(getattr(args, "device", "auto"), getattr(args, "rank_timeout", None) or DEFAULT_TIMEOUT_S)
    except SystemExit as e:
        return int(e.code or 0)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_INTERNAL
    try:
        served = serve_torchrun_rank(args)
        if served is not None:
            return served
        return args.func(args)
    except Interrupted:
        print("Interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except GlintError as e:
        print_error(e)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("Interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 - never a traceback for users
        print_internal(e)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
