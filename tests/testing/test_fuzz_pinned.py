"""The fuzzer generates the same queries for the same seed: the first queries
of a few runs and a digest of their first 400 (SQL, ordered, features, CTAS) are
pinned, so that a change to the generator that shifts its random streams shows.

When a change to the generator is meant to change the queries, recompute the
values below with the new code and say so in the change.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from glint.testing.fuzz.data import make_data
from glint.testing.fuzz.generator import QueryGenerator, generate_query

PINNED = {
    (0, 150): (
        "6a1ba53a6bc8f3354cdd1c5a2ffb7704fefe29d00e411c26feb02e00038e3a14",
        [
            "SELECT CASE WHEN (COUNT_IF(NULL) > QUANTILE(DISTINCT q2.c1, 0.6::DOUBLE)) THEN MAX(q2.c2) ELSE ARGMAX(q2.c2, q2.c2) END AS c0, (- QUANTILE(9999999999999999.99, 0)) AS c1 FROM (SELECT a1.k2 AS c0, (a1.dt - a1.dt) AS c1, MAX(a1.s) OVER (PARTITION BY a1.s, a1.dt ORDER BY a1.n DESC NULLS FIRST) AS c2 FROM t1 AS a1 WHERE (-1 < -2)) AS q2 WHERE (q2.c2 <= q2.c2) HAVING (CASE WHEN TRUE THEN MIN(NULL) ELSE QUANTILE(q2.c0, -0.25) FILTER (WHERE (CAST('-0.0' AS DOUBLE) > CAST(0.1 AS DOUBLE))) END <> TRIM(STRING_AGG(DATE '1995-02-14', ' - ')))",
            "SELECT QUANTILE_DISC(((a4.k1 - a4.k1) - (DATE '1995-01-29' - a4.dt)), 0.333) AS c0, (- ARG_MAX(a4.d18, a4.d18)) AS c1 FROM (SELECT ('e\u0301' IS NULL) AS c0, ((SELECT CAST(FALSE AS INTEGER) FROM t5 AS a2) != COUNT(DISTINCT (CAST((-392.8) AS DECIMAL(10,0)) + CAST(1.5e0 AS DECIMAL(10,0))))) AS c1 FROM t4 AS a1 WHERE (FALSE OR TRUE) GROUP BY a1.k1) AS q3 JOIN t2 AS a4 ON regexp_matches(TRIM(a4.k2), '', 'l') WHERE (a4.k2 NOT LIKE 'a_c') GROUP BY a4.s HAVING CAST(NULL AS BOOLEAN)",
            "SELECT BOOL_AND((q4.c0 NOT IN (NULL, CAST(-0.25 AS DOUBLE), q4.c0))) AS c0, (NOT (((q4.c3 || q4.c3)) > MAX(q4.c3))) AS c1, CAST(COALESCE(MAX(q4.c2), MAX(q4.c2) FILTER (WHERE (NULL BETWEEN -2 AND 6)), 9999999999999999.99) AS BIGINT) AS c2, CAST((MAX(10) - 10) AS DOUBLE) AS c3 FROM (SELECT (ABS((-677.58)) / (0.0e0 * a2.fx)) AS c0, a1.ts AS c1, (CASE WHEN TRUE THEN a1.d15 END * CASE WHEN a1.flag THEN a1.d15 END) AS c2, left(a1.k2, (a2.k1 % 6)) AS c3 FROM t1 AS a1 RIGHT JOIN t3 AS a2 ON a1.k2 = a2.k2 AND a1.k1 = a2.k1 WHERE (EXISTS (SELECT * FROM t0 AS a3 WHERE (a3.k2 = a2.k2) AND ((a3.flag IS NULL))))) AS q4 GROUP BY time_bucket(INTERVAL 1 DAY, q4.c1), (q4.c3 || q4.c3) ORDER BY 3, c1 DESC, 1 NULLS FIRST, c3 DESC NULLS LAST LIMIT 5",
        ],
    ),
    (1, 40): (
        "dedf9033af44e01e14797a040a12ba09cc4ef4bdbee00fee941cfed1ff0f002d",
        [
            "SELECT DISTINCT a1.s AS c0, DATE '1900-01-01' AS c1, a1.f AS c2 FROM t1 AS a1 WHERE (a1.ts >= (TIMESTAMP '2024-02-29 12:00' - INTERVAL '13' MONTH))",
            "SELECT COALESCE(q9.c0, (-9223372036854775807), q9.c0, -2) AS c0, CASE WHEN ('true' IN (SELECT COALESCE('a b', a10.s, 'Abc') AS c0 FROM t1 AS a10 JOIN t3 AS a11 ON a10.k1 = a11.k1 AND a10.k2 = a11.k2)) THEN NULL ELSE EXTRACT(isodow FROM DATE '1995-02-06') END AS c1 FROM (SELECT a1.b AS c0, date_trunc('microsecond', a1.dt) AS c1 FROM t2 AS a1, (SELECT MAX(a3.k2) AS c0, (MAX((-385.6)) - QUANTILE(a2.i, -0.5)) AS c1 FROM t0 AS a2 LEFT JOIN t0 AS a3 ON a2.tk = a3.tk AND (CAST(NULL AS BOOLEAN) OR TRUE) LEFT JOIN t0 AS a4 ON a3.k1 = a4.k1 AND (a3.s LIKE '') WHERE (time_bucket(INTERVAL 3 MONTHS, try_strptime(strftime(DATE '1999-12-31', '%G-W%V-%u'), '%G-W%V-%u'), TIMESTAMP '1995-01-31 00:00:00.000001') NOT IN (CAST(NULL AS TIMESTAMP), TIMESTAMP '1995-01-01', TIMESTAMP '2000-02-29 23:59:59.999999', TIMESTAMP '1995-01-31 00:00:00.000001')) GROUP BY COALESCE(NULL, a3.s), LENGTH(a4.s)) AS q5 WHERE (a1.b = q5.c1) AND ((EXISTS (SELECT 1 FROM t1 AS a6 CROSS JOIN t2 AS a7 JOIN t2 AS a8 ON a7.k2 = a8.k2 AND a7.tk = a8.tk WHERE (a7.tk = a1.tk))))) AS q9 WHERE ('xxxxx' NOT LIKE '%\u00fc%')",
            "SELECT (MIN(a1.dt) - INTERVAL '-1' DAY) AS c0, QUANTILE_DISC(-3, 0.75) AS c1, QUANTILE_CONT(a1.d4, 0.9) AS c2, MIN(a1.s) AS c3 FROM t2 AS a1 INTERSECT SELECT DISTINCT (MIN(DATE '2024-02-29') - INTERVAL '1' YEAR) AS c0, COALESCE(SUM(COALESCE((a2.k1 + a2.i), CAST(a2.b AS BIGINT), a2.k1, 9223372036854775807)), MAX(CAST(0 AS INTEGER)), QUANTILE((CASE WHEN TRUE THEN a2.b ELSE a2.k1 END - datediff('hour', a2.ts, DATE '2001-03-31')), 0.3::DOUBLE), 100000) AS c1, (MAX(a2.d4) FILTER (WHERE TRUE) + SUM(a2.b)) AS c2, COALESCE(ARG_MAX_NULL(CASE WHEN a2.k2 > 'm' THEN a2.k2 END, a2.k2), MIN(a2.s), 'b') AS c3 FROM t5 AS a2 WHERE (a2.ts BETWEEN a2.ts AND CAST('1995-01-01' AS TIMESTAMP)) GROUP BY a2.ts ORDER BY 4 NULLS FIRST, 2, 1 DESC NULLS FIRST, 3 LIMIT 10 OFFSET 3",
        ],
    ),
    (20240611, 100): (
        "302231bd9f77600f8f8e76b30776e728ae7675b6eeca5fe3b864a4f0879770ab",
        [
            "SELECT CASE MIN('NULL') WHEN '\u00df' THEN SUBSTRING(LOWER(a1.s), 1) ELSE MIN('NULL') END AS c0 FROM t4 AS a1 WHERE (a1.dt IN (DATE '2000-02-29', DATE '1995-02-12')) GROUP BY a1.s HAVING FALSE",
            "WITH w9 AS (SELECT ABS((SELECT SUM(a6.d4) AS c0 FROM t3 AS a5 FULL JOIN t5 AS a6 ON a5.k2 = a6.k2 WHERE (a6.k2 = a1.k2))) AS c0, (a1.ts NOT IN (SELECT a7.tk AS c0 FROM t2 AS a7 JOIN t1 AS a8 ON a7.k1 = a8.k1 WHERE (a8.k1 = a1.k1) AND (('null' NOT ILIKE '%' || 'a')))) AS c1 FROM t4 AS a1 FULL JOIN (SELECT QUANTILE(a2.dt, 0.1) AS c0 FROM t2 AS a2 RIGHT JOIN t1 AS a3 ON a2.k2 = a3.k2 WHERE (a2.dt = a2.dt) GROUP BY a2.b, a2.d4) AS q4 ON a1.ts = q4.c0), w12 AS (SELECT DISTINCT TIMESTAMP '1900-01-01 00:00:00' AS c0 FROM t3 AS a10 CROSS JOIN t5 AS a11 WHERE (CAST(a10.k1 AS VARCHAR) IN ('c', 'a', '__', '\u00fc', '\u00fc'))) SELECT DISTINCT time_bucket(INTERVAL 1 HOUR, date_trunc('hour', CASE DATE '1995-01-10' WHEN DATE '2100-12-31' THEN DATE '2001-03-31' ELSE DATE '1995-01-10' END), TIMESTAMP '1995-01-31 00:00:00.000001') AS c0 FROM w12 AS a13 WHERE (EXISTS (SELECT NULL FROM t5 AS a14 RIGHT JOIN t5 AS a15 USING (k1) WHERE ((a14.i != a14.b)))) UNION ALL SELECT MIN(NULLIF(TIMESTAMP '1969-12-31 23:59:59', a17.tk)) FILTER (WHERE (NOT a16.c1)) AS c0 FROM w9 AS a16 RIGHT JOIN t2 AS a17 ON a16.c0 = a17.d4 WHERE a16.c1 HAVING QUANTILE_DISC((a16.c1 AND (a16.c1 OR a16.c1)), 0.6::DOUBLE) ORDER BY c0 NULLS LAST LIMIT 3",
            "SELECT DISTINCT MAX(a1.s) AS c0, last_day(last_day(MIN(DISTINCT CAST('1995-01-31 00:00:00.000001' AS TIMESTAMP)))) AS c1, COUNT(*) AS c2 FROM t4 AS a1 WHERE (EXISTS (SELECT NULL FROM t1 AS a2)) HAVING (CAST(SUM(9999999999999999.99) AS VARCHAR) >= ARBITRARY(a1.s ORDER BY a1.s DESC) FILTER (WHERE (a1.dt IS NOT NULL)))",
        ],
    ),
}
SEQUENCE_DIGEST = "4d8884d28c0bb24edae38874d5c819b56d7913e9d2ea0a2fedecebe8b167262c"  # 300 queries of one generator, seed 3, make_data(0, rows=10)


@pytest.mark.parametrize("seed,rows", sorted(PINNED))
def test_first_queries_of_a_seed_are_pinned(seed, rows):
    digest, first = PINNED[seed, rows]
    data = make_data(seed, rows=rows)
    queries = [generate_query(data, seed, i) for i in range(400)]
    assert [q.sql for q in queries[: len(first)]] == first
    h = hashlib.sha256()
    for q in queries:
        h.update(json.dumps([q.sql, q.ordered, sorted(q.features), q.ctas]).encode())
        h.update(b"\n")
    assert h.hexdigest() == digest


def test_one_generators_sequence_is_pinned():
    g = QueryGenerator(make_data(0, rows=10).info, seed=3)
    h = hashlib.sha256()
    for _ in range(300):
        h.update(g.generate().sql.encode())
        h.update(b"\n")
    assert h.hexdigest() == SEQUENCE_DIGEST
