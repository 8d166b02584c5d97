"""Fill in the expected results of sqllogictest files from DuckDB (the oracle).

Test authors write the SQL; this script writes the answers::

    query                      <- types may be left out; they are inferred
    SELECT a, b FROM t ORDER BY a

    query II rowsort           <- or given; kept when the column count matches
    SELECT a, b FROM t

becomes ``query II`` + SQL + ``----`` + DuckDB's rows.  Every query record is
(re)computed; statements are run too, and a ``statement ok`` that fails or a
``statement error`` that succeeds in DuckDB is reported.  Records that do not
apply to DuckDB (``onlyif glint``, ``skipif duckdb``, ``mode skip``) are left as
they are.  Everything else in the file (comments, blank lines) is kept.

Usage (from the repository root, in the dev venv)::

    python tests/sqllogic/generate.py tests/sqllogic/joins/outer.test   # rewrite one file
    python tests/sqllogic/generate.py tests/sqllogic                  # every .test file below
    python tests/sqllogic/generate.py --check tests/sqllogic          # exit 1 if any file would change

Exit status: 0 when all is well, 1 when ``--check`` found a stale file or a
record misbehaved under DuckDB.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

_REPO = str(Path(__file__).resolve().parents[2])
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)  # run as a script: tests.sqllogic is importable from the repository root
from tests.sqllogic import runner  # noqa: E402

ORACLE_VERSION = "1.4.4"  # pyproject.toml pins duckdb==1.4.4 for tests
_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)


def _header(rec: runner.Record, types: str) -> str:
    parts = ["query", types]
    if rec.sortmode != "nosort" or rec.label:
        parts.append(rec.sortmode)
    if rec.label:
        parts.append(rec.label)
    return " ".join(parts)


def generate_text(text: str, path: Path | None = None) -> tuple[str, list[str]]:
    """Return (new text, problems) for the text of one .test file."""
    tf = runner.parse(text, path)
    where = str(path) if path is not None else "<string>"
    sess = runner.Session(tf, engine="duckdb", device=None)
    problems: list[str] = []
    replacements: dict[int, tuple[int, list[str]]] = {}  # header index -> (end index, new lines)
    try:
        for index, rec in enumerate(tf.records):
            if runner.skip_reason(rec, "duckdb", None):
                continue
            if rec.kind == "statement":
                try:
                    sess.run_index(index)
                except Exception as e:
                    problems.append(str(e))
                continue
            try:
                table = sess.query_table(rec)
            except Exception as e:
                problems.append(str(e))
                continue
            sess.done[index] = None
            rows = runner.table_to_rows(table)
            inferred = runner.infer_types(table)
            types = rec.types if rec.types and len(rec.types) == len(inferred) else inferred
            if rec.sortmode != "nosort":
                rows = runner.sort_rows(rows, types, "rowsort")
            elif len(rows) > 1 and not _ORDER_BY.search(rec.sql):
                problems.append(
                    f"{where}:{rec.line}: warning: {len(rows)} rows, nosort and no ORDER BY; "
                    f"use rowsort (results would depend on the engine's row order)"
                )
            if any(v != v.strip() for r in rows for v in r):
                problems.append(
                    f"{where}:{rec.line}: warning: a value has leading/trailing blanks; editors may "
                    f"strip them: print it between brackets ('[' || x || ']')"
                )
            sql_lines = tf.lines[rec.header_index + 1 : rec.end_index]
            if rec.has_separator:
                sql_lines = sql_lines[: [ln.rstrip() for ln in sql_lines].index("----")]
            new = [_header(rec, types), *sql_lines, "----", *("\t".join(r) for r in rows)]
            replacements[rec.header_index] = (rec.end_index, new)
    finally:
        sess.close()

    out: list[str] = []
    i = 0
    lines = tf.lines
    while i < len(lines):
        if i in replacements:
            end, new = replacements[i]
            out.extend(new)
            i = end
            if i < len(lines) and lines[i].strip() != "":
                out.append("")
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out) + "\n", problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("paths", nargs="+", help=".test files or directories (searched recursively)")
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if a file would change")
    args = ap.parse_args(argv)
    import duckdb

    if duckdb.__version__ != ORACLE_VERSION:
        print(
            f"warning: the expected results come from DuckDB {ORACLE_VERSION}; this is DuckDB {duckdb.__version__}",
            file=sys.stderr,
        )
    status = 0
    for path in runner.iter_test_files(args.paths):
        old = path.read_text(encoding="utf-8")
        try:
            new, problems = generate_text(old, path)
        except runner.SQLLogicParseError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
            continue
        for p in problems:
            print(p, file=sys.stderr)
            if ": warning: " not in p:
                status = 1
        if new != old:
            if args.check:
                print(f"stale: {path}")
                status = 1
            else:
                path.write_text(new, encoding="utf-8")
                print(f"updated: {path}")
    return status


if __name__ == "__main__":
    sys.exit(main())
