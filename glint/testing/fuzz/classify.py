"""The status of a query from the two engines' answers (see the statuses in
glint.testing.fuzz.runner)."""

from __future__ import annotations

import re

from glint.testing.fuzz.known_bugs import KNOWN_BUGS
from glint.testing.fuzz.oracle import RUNTIME_ERROR, duckdb_limitation
from glint.testing.fuzz.results import MAX_RESULT_ROWS, Outcome, compare_results


def _construct_key(construct: str) -> str:
    m = re.match(r"(expression \w+):", construct or "")
    if m:
        return m.group(1)
    s = re.sub(r'"[^"]*"', '"…"', construct or "?")
    s = re.sub(r"'[^']*'", "'…'", s)
    s = re.sub(r"\b\d+\b", "N", s)
    return s.strip()[:120]


def classify(sql: str, duck_res, glint_res, known_bugs: bool = False) -> Outcome:
    """The outcome of ``sql`` from DuckDB's reply and glint's (("ok", table)
    or an error tuple); with ``known_bugs``, failures KNOWN_BUGS matches are
    counted as known bugs."""
    o = Outcome("match", sql)
    if duck_res[0] in ("timeout", "internal"):
        # DuckDB ran too long, or hit an internal error of its own (a DuckDB bug): no reference answer
        o.status, o.details = (
            "skipped",
            [("DuckDB internal error: " if duck_res[0] == "internal" else "") + duck_res[1]],
        )
        return o
    if duck_res[0] == "ok":
        o.duck_table = duck_res[1]
        if o.duck_table.num_rows > MAX_RESULT_ROWS:
            o.status, o.details = "skipped", [f"DuckDB result has {o.duck_table.num_rows} rows"]
            return o
    else:
        o.duck_error = duck_res[1]
    kind = glint_res[0]
    if kind == "ok":
        o.glint_table = glint_res[1]
    else:
        o.glint_error_type = glint_res[1]
        o.glint_error = f"{glint_res[1]}: {glint_res[2]}"
    if kind == "crash":
        o.status = "crash"
        o.details = [o.glint_error] + ([glint_res[3]] if len(glint_res) > 3 and glint_res[3] else [])
    elif kind == "refusal":
        o.status = "refusal"
        o.construct = _construct_key(glint_res[3])
    elif kind == "glint_error":
        if o.duck_error is not None:
            o.status = "both_error"
        else:
            o.status = "error_mismatch"
            o.details = [f"DuckDB answered ({o.duck_table.num_rows} rows); glint raised {o.glint_error}"]
            if o.duck_table.num_rows == 0:
                o.details.append("(possibly evaluation order: DuckDB's result is empty)")
    else:  # glint answered
        if o.duck_error is not None:
            why = duckdb_limitation(o.duck_error)
            if why is None and o.glint_table.num_rows == 0 and RUNTIME_ERROR.match(o.duck_error):
                why = (
                    "evaluation order: DuckDB evaluated an expression that fails on a row glint never had to "
                    "evaluate it for (glint's result is empty)"
                )
            if why:
                o.status = "duck_only_error"
                o.details = [f"DuckDB limitation ({why}): {o.duck_error}"]
            else:
                o.status = "mismatch"
                o.details = [f"glint returned {o.glint_table.num_rows} rows where DuckDB raised: {o.duck_error}"]
        else:
            try:
                diffs = compare_results(sql, o.glint_table, o.duck_table)
            except Exception as e:  # noqa: BLE001
                diffs = [f"comparison failed: {type(e).__name__}: {e}"]
            if diffs:
                o.status, o.details = "mismatch", diffs
    if known_bugs and o.status in ("mismatch", "crash", "error_mismatch"):
        for kb in KNOWN_BUGS:
            try:
                hit = kb.predicate(sql, o)
            except Exception:  # noqa: BLE001
                hit = False
            if hit:
                o.known = kb.name
                o.status = "known_bug"
                break
    return o
