"""Result column names against DuckDB's: each SELECT list below is asked of
both engines, and glint's names must be DuckDB's (``count_star()``,
``upper(s)``, ``(x + 1)``, ``CAST(x AS INTEGER)``, the column's own name for
a column, duplicates kept in a result and made unique in a derived table).

An item that glint cannot run yet (a function or type it does not support) is
still named: its name is read from the parse (the alias glint gives it)."""

import duckdb
import pyarrow as pa
import pytest
from sqlglot import exp

import glint
from glint.errors import NotSupported, TypeMismatch
from glint.sql import frontend
from glint.testing.compare import compare_tables

SETUP = [
    "CREATE TABLE t(x INTEGER, y INTEGER, a INTEGER, b INTEGER, s VARCHAR, d DATE, ts TIMESTAMP, m DECIMAL(10,2), "
    'f DOUBLE, "min" INTEGER, "Mixed Case" INTEGER)',
    "INSERT INTO t VALUES (1, 2, 3, 4, '2020-01-01', DATE '2020-01-02', TIMESTAMP '2020-01-02 03:04:05', 1.50, 2.5, 7, 8)",
    "CREATE TABLE u(x INTEGER, z INTEGER)",
    "INSERT INTO u VALUES (1, 2)",
]

# a line is a SELECT list over t, or a whole query
CASES = """
x
t.x
X
"x"
"Mixed Case"
"min"
x AS foo
x + 1
x+1
1 + x
x - 1
x * 2
x / 2
x // 2
x % 2
x ** 2
x ^ 2
-x
+x
- 1
-1
-1.5
x + 1 * 2
x + y + 1
x * (y + 1)
t.x + 1
x = 1
x <> 1
x != 1
x < 1
x <= 1
x > 1
x >= 1
x IS NULL
x IS NOT NULL
x ISNULL
x NOTNULL
x IS DISTINCT FROM y
x IS NOT DISTINCT FROM y
NOT (x > 1)
NOT x > 1
x > 1 AND y > 1
x > 1 OR y > 1
x > 1 AND y > 1 AND a > 1
x > 1 AND (y > 1 OR a > 1)
x BETWEEN 1 AND 3
x NOT BETWEEN 1 AND 3
x IN (1, 2, 3)
x NOT IN (1, 2)
x IN (SELECT z FROM u)
x NOT IN (SELECT z FROM u)
EXISTS (SELECT 1 FROM u)
NOT EXISTS (SELECT 1 FROM u)
(SELECT max(z) FROM u)
s LIKE 'a%'
s NOT LIKE 'a%'
s ILIKE 'A%'
s NOT ILIKE 'A%'
s LIKE 'a!%' ESCAPE '!'
s SIMILAR TO 'a.*'
s GLOB 'a*'
s ~~ 'a%'
s || 'x'
s || 'x' || 'y'
42
0
3.14
1e3
1.5e-3
123456789012345678901234567890
'abc'
'it''s'
''
NULL
TRUE
FALSE
DATE '2020-01-01'
TIMESTAMP '2020-01-01 00:00:00'
INTERVAL 1 DAY
INTERVAL '1' DAY
INTERVAL '2 days'
d + INTERVAL 1 DAY
d + INTERVAL '1' MONTH
d - INTERVAL 3 YEAR
CAST(x AS INTEGER)
CAST(x AS BIGINT)
CAST(x AS VARCHAR)
CAST(x AS DECIMAL(10,2))
CAST(x AS DOUBLE)
CAST(x AS FLOAT)
CAST(x AS INT)
CAST(x AS TEXT)
CAST(s AS DATE)
CAST(x AS HUGEINT)
CAST(x AS SMALLINT)
CAST(x AS BOOLEAN)
CAST(ts AS TIMESTAMP)
x::VARCHAR
x::BIGINT
x::DECIMAL(18,3)
TRY_CAST(s AS INTEGER)
'2020-01-01'::DATE
CASE WHEN x > 1 THEN 'a' ELSE 'b' END
CASE WHEN x > 1 THEN 'a' END
CASE WHEN x > 1 THEN 'a' WHEN x > 0 THEN 'b' ELSE 'c' END
CASE x WHEN 1 THEN 'a' ELSE 'b' END
CASE x WHEN 1 THEN 'a' WHEN 2 THEN 'b' END
coalesce(x, 0)
COALESCE(x, y, 0)
nullif(x, 0)
ifnull(x, 0)
if(x > 1, 'a', 'b')
greatest(x, y)
least(x, y)
abs(x)
ABS(x)
Abs(x)
round(m, 1)
round(f)
floor(f)
ceil(f)
sqrt(f)
upper(s)
UPPER(s)
lower(s)
length(s)
substr(s, 1, 2)
substring(s, 1, 2)
SUBSTRING(s FROM 1 FOR 2)
trim(s)
TRIM(BOTH 'a' FROM s)
ltrim(s)
replace(s, 'a', 'b')
concat(s, 'x')
strpos(s, 'b')
position('b' IN s)
starts_with(s, 'a')
contains(s, 'b')
regexp_matches(s, 'a.')
left(s, 2)
right(s, 2)
reverse(s)
lpad(s, 5, '*')
EXTRACT(YEAR FROM d)
extract(month from d)
year(d)
date_part('year', d)
date_trunc('month', d)
strftime(d, '%Y')
date_diff('day', d, d)
datediff('day', d, d)
current_date
now()
count(*)
COUNT(*)
count()
count(x)
count(1)
count(DISTINCT x)
sum(x)
SUM(x)
sum(DISTINCT x)
sum(x) FILTER (WHERE x > 0)
count(*) FILTER (WHERE x > 0)
avg(x)
min(x)
max(x)
min(t.x)
sum(x + 1)
sum(x) + 1
sum(x) / count(*)
string_agg(s, ',')
string_agg(s, ',' ORDER BY s)
list(x ORDER BY x DESC)
first(x)
median(x)
stddev(x)
quantile_cont(x, 0.5)
bool_and(x > 1)
any_value(x)
arg_max(x, y)
row_number() OVER ()
row_number() OVER (ORDER BY x)
rank() OVER (PARTITION BY y ORDER BY x)
sum(x) OVER (PARTITION BY y)
sum(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
sum(x) OVER (ORDER BY x ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
avg(x) OVER (PARTITION BY y ORDER BY x DESC)
lag(x) OVER (ORDER BY x)
lag(x, 2, 0) OVER (ORDER BY x)
first_value(x) OVER (ORDER BY x NULLS FIRST)
count(*) OVER ()
ntile(2) OVER (ORDER BY x)
x + y * 2 - a / b
x IS TRUE
x > 1 IS NOT FALSE
~x
x & y
x | y
x << 1
x >> 1
SELECT x, x FROM t
SELECT x, y AS x FROM t
SELECT x + 1, x + 1 FROM t
SELECT * FROM t
SELECT *, x + 1 FROM t
SELECT t.* FROM t
SELECT * FROM t, u
SELECT * FROM t JOIN u USING (x)
SELECT * FROM (SELECT x + 1 FROM t)
SELECT * FROM (SELECT x + 1 FROM t) sub(c)
SELECT x + 1 FROM t UNION ALL SELECT 2 FROM t
WITH c AS (SELECT upper(s) FROM t) SELECT * FROM c
SELECT count(*), sum(x) FROM t GROUP BY y
SELECT y, count(*) FROM t GROUP BY y
SELECT 1
SELECT 1, 2
SELECT 'a' || 'b'
SELECT -(-1)
SELECT - - 1
SELECT 1 - -1
SELECT (1, 2)
SELECT [1, 2]
SELECT {'a': 1}
SELECT x FROM t ORDER BY 1
SELECT DISTINCT x FROM t
x IN (y, a)
s IN ('a', 'b')
NOT x IN (1, 2)
NOT (x IS NULL)
x = y AND NOT s LIKE 'a%'
COLUMNS('x|y')
array_length([1,2])
x::INTEGER + 1
CAST(x + 1 AS VARCHAR)
CAST(x AS VARCHAR) || 'a'
CAST(m AS DECIMAL(5,1))
1::DECIMAL(4,1)
0.1 + 0.2
1.0
100.00
-0.5
'a' = 'b'
NULL IS NULL
x + NULL
t."min"
"t"."x"
count("min")
"count"(x)
"upper"(s)
upper(S)
upper(T.S)
sum(X)
"Mixed Case" + 1
t."Mixed Case" + 1
"min" + 1
t."min" + 1
SELECT "select" FROM (SELECT 1 AS "select")
SELECT "Select" + 1 FROM (SELECT 1 AS "Select")
SELECT "a b" + 1 FROM (SELECT 1 AS "a b")
SELECT "a""b" + 1 FROM (SELECT 1 AS "a""b")
SELECT "_x1" + 1 FROM (SELECT 1 AS "_x1")
SELECT "1x" + 1 FROM (SELECT 1 AS "1x")
SELECT "é" + 1 FROM (SELECT 1 AS "é")
SELECT sub.k + 1 FROM (SELECT 1 AS k) sub
SELECT "Sub".k + 1 FROM (SELECT 1 AS k) "Sub"
SELECT K FROM (SELECT 1 AS k) sub
SELECT k FROM (SELECT 1 AS K) sub
SELECT X FROM (SELECT 1 AS "X") sub
NOT NOT (x > 1)
NOT (x = y)
NOT (x <> y)
NOT (x < y)
NOT (x >= y)
NOT (x IS NOT NULL)
NOT x
NOT (x > 1 AND y > 1)
NOT x BETWEEN 1 AND 2
NOT x NOT IN (1, 2)
x > 1 AND (y > 1 AND a > 1)
x > 1 OR y > 1 AND a > 1
-(x + 1)
-sum(x)
- (1)
-(1 + 1)
-x * 2
-(-x)
1e20
1e-10
2.0e0
0.5e0
1.7976931348623157e308
123.456e1
.5
5.
0.0
00042
1_000
9223372036854775807
9223372036854775808
-9223372036854775808
'a' || 1
x + 1.5
m * 2
(SELECT 1)
(SELECT max(z) AS mz FROM u)
(SELECT z FROM u LIMIT 1)
(SELECT z FROM u WHERE z > 1 LIMIT 1)
x IN (SELECT z FROM u WHERE z > 0)
x IN (SELECT z FROM u WHERE u.x = t.x)
x = ANY(SELECT z FROM u)
x > ALL(SELECT z FROM u)
EXISTS (SELECT * FROM u WHERE u.x = t.x)
EXISTS (SELECT 1 FROM u, t AS t2 WHERE u.z = t2.y GROUP BY u.x HAVING count(*) > 1 ORDER BY 1 LIMIT 5)
s ~ 'a.*'
s !~ 'a.*'
regexp_full_match(s, 'a')
s NOT SIMILAR TO 'a.*'
s ILIKE 'a!%' ESCAPE '!'
s NOT LIKE 'a!%' ESCAPE '!'
x IS NOT TRUE
x > 1 IS TRUE
x > 1 IS FALSE
x > 1 IS NOT TRUE
x > 1 IS UNKNOWN
CAST(s AS VARCHAR(10))
CAST(x AS NUMERIC)
CAST(x AS DECIMAL)
CAST(x AS NUMERIC(10,2))
CAST(x AS DECIMAL(10))
CAST(ts AS TIMESTAMP WITH TIME ZONE)
CAST(ts AS TIMESTAMPTZ)
CAST(x AS INT8)
CAST(x AS INT4)
CAST(x AS INT64)
CAST(x AS REAL)
CAST(x AS FLOAT8)
CAST(ts AS DATETIME)
CAST(x AS STRING)
CAST(x AS BOOL)
CAST(x AS TINYINT)
CAST(x AS UBIGINT)
CAST(x AS INTEGER[])
CAST(s AS BLOB)
CAST(ts AS TIME)
CAST(s AS UUID)
CAST(x AS DOUBLE PRECISION)
CAST(x AS CHAR)
CAST(x AS BPCHAR)
CAST(x AS LONG)
CAST(x AS INT2)
CAST(x AS INT1)
CAST(x AS SIGNED)
CAST(x AS INT128)
CAST(x AS UHUGEINT)
CAST(x AS UINTEGER)
CAST(x AS USMALLINT)
CAST(x AS UTINYINT)
x::INTEGER::VARCHAR
CAST(CAST(x AS BIGINT) AS DOUBLE)
current_timestamp
current_time
CURRENT_DATE
today()
localtimestamp
coalesce(x, coalesce(y, 0))
COALESCE(x)
ifnull(x, y)
if(x > 1, 1, 2) + 1
CASE WHEN x > 1 THEN x + 1 ELSE y * 2 END
CASE WHEN x THEN 1 END
CASE WHEN NULL THEN 1 END
CASE x WHEN 1 THEN 'a' WHEN NULL THEN 'b' END
CASE WHEN x > 1 THEN NULL ELSE 1 END
length(s) + 1
len(s)
char_length(s)
strlen(s)
ucase(s)
lcase(s)
ceiling(f)
power(x, 2)
pow(x, 2)
log(f)
ln(f)
log10(f)
exp(f)
mod(x, 2)
trunc(f)
round(f, 2)
sign(x)
pi()
random() < 2
md5(s)
hash(x)
concat_ws(',', s, s)
split_part(s, ',', 1)
regexp_replace(s, 'a', 'b')
regexp_extract(s, 'a')
instr(s, 'b')
repeat(s, 2)
substring(s, 2)
substr(s, 2)
TRIM(LEADING 'a' FROM s)
TRIM(TRAILING FROM s)
rtrim(s, 'c')
array_agg(x)
list(x)
count(x) FILTER (x > 0)
sum(x ORDER BY y)
avg(DISTINCT x)
count(DISTINCT x) FILTER (WHERE x > 1)
min(x) + max(x)
count(*) + 1
row_number() OVER (PARTITION BY y)
sum(x) OVER (ORDER BY x RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING)
sum(x) OVER (ORDER BY x ROWS 2 PRECEDING)
sum(x) OVER (ORDER BY x RANGE UNBOUNDED PRECEDING)
sum(x) OVER (ORDER BY x ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)
sum(x) OVER (PARTITION BY y, a ORDER BY x ASC NULLS LAST, b DESC NULLS FIRST)
sum(x) OVER (ORDER BY x DESC NULLS LAST)
sum(x) OVER (ORDER BY x ASC)
sum(x) FILTER (WHERE x > 1) OVER ()
lead(x, 1) OVER (ORDER BY x) IS NULL
dense_rank() OVER (ORDER BY x) + 1
percent_rank() OVER (ORDER BY x)
sum(sum(x)) OVER ()
date_part('year', d) + 1
year(d) * 100 + month(d)
d + 1
d - DATE '2020-01-01'
ts + INTERVAL 1 HOUR
d + INTERVAL '1 month'
d + INTERVAL (x) DAY
d > DATE '2020-01-01'
d BETWEEN DATE '2020-01-01' AND DATE '2021-01-01'
ts < TIMESTAMP '2020-01-01'
EXTRACT(EPOCH FROM ts)
EXTRACT(DOW FROM d)
date_trunc('year', ts)
last_day(d)
make_date(2020, 1, 1)
strptime('2020', '%Y')
x IN (1)
x IN (NULL)
s IN ('a')
'abc' LIKE s
x BETWEEN y AND a
x + 1 BETWEEN 1 AND 2
x > 1 AND y > 1 OR a > 1 AND b > 1
x = 1 OR x = 2 OR x = 3
EXISTS (SELECT * FROM u)
EXISTS (SELECT u.* FROM u)
EXISTS (SELECT z AS q FROM u)
EXISTS (SELECT DISTINCT z FROM u)
EXISTS (SELECT z FROM u ORDER BY z DESC NULLS LAST)
EXISTS (SELECT z FROM u ORDER BY z)
EXISTS (SELECT z FROM u LIMIT 1 OFFSET 2)
EXISTS (SELECT z FROM u AS uu JOIN t AS tt ON uu.x = tt.x)
EXISTS (SELECT z FROM u JOIN t ON u.x = t.x)
EXISTS (SELECT z FROM u LEFT JOIN t ON u.x = t.x)
EXISTS (SELECT z FROM u INNER JOIN t USING (x))
EXISTS (SELECT z FROM u CROSS JOIN t)
EXISTS (SELECT z FROM u, t)
EXISTS (SELECT z FROM (SELECT z FROM u) sq)
EXISTS (SELECT z FROM u WHERE z > 1 AND x < 2)
EXISTS (SELECT 1 FROM u GROUP BY z, x)
EXISTS (SELECT 1 FROM u UNION SELECT 2)
EXISTS (SELECT 1 FROM u UNION ALL SELECT 2)
EXISTS (WITH c AS (SELECT 1) SELECT * FROM c)
EXISTS (SELECT 1)
EXISTS (SELECT z FROM main.u)
EXISTS (SELECT count(*) FROM u HAVING count(*) > 0)
EXISTS (SELECT z FROM u WHERE z IN (SELECT 1))
x IN (SELECT 1)
x IN (SELECT z FROM u) AND y > 1
x NOT IN (SELECT z FROM u) OR y > 1
SELECT * FROM (SELECT x, y AS x FROM t)
SELECT * FROM (SELECT x, x FROM t)
SELECT * FROM (SELECT x + 1, x + 1 FROM t)
WITH c AS (SELECT x, y AS x FROM t) SELECT * FROM c
SELECT * FROM (SELECT * FROM t, u)
SELECT x AS K, y AS k FROM t
SELECT "Mixed Case", "mixed case" + 1 FROM t
SELECT * FROM (SELECT 1 AS K) sub
SELECT X FROM t
SELECT * FROM t AS t2(P, Q)
SELECT P FROM t AS t2(P, Q)
SELECT * FROM (VALUES (1, 2))
SELECT * FROM (VALUES (1, 2)) v(a, B)
SELECT x + 1 FROM t UNION ALL SELECT y FROM t
SELECT x FROM t UNION SELECT x + 1 FROM t
SELECT "(x + 1)" FROM (SELECT x + 1 FROM t)
SELECT sum(x) FROM t ORDER BY sum(x)
SELECT x + 1 FROM t ORDER BY x + 1
SELECT x + 1 FROM t GROUP BY x + 1
SELECT x + 1, count(*) FROM t GROUP BY ALL
SELECT DISTINCT x + 1 FROM t
SELECT upper(s), count(*) FROM t GROUP BY 1 ORDER BY 2
""".strip().splitlines()

# where glint's name differs from DuckDB's, and why
KNOWN = {
    "SELECT .5 FROM t": "sqlglot reads a number written with a leading dot as 0.5",
    "SELECT list(x ORDER BY x DESC) FROM t": "DuckDB's parser rewrites list(x ORDER BY x) into list_sort(list(x), ...)",
    "SELECT COLUMNS('x|y') FROM t": "COLUMNS(...) expands to columns, which glint does not support",
}


def _query(case: str) -> str:
    return case if case.lstrip().upper().startswith(("SELECT", "WITH", "(")) else f"SELECT {case} FROM t"


@pytest.fixture(scope="module")
def engines(device):
    duck = duckdb.connect()
    for s in SETUP:
        duck.execute(s)
    con = glint.connect(device=device)
    for name in ("t", "u"):
        con.register(name, duck.sql(f"SELECT * FROM {name}").arrow())
    yield duck, con
    con.close()
    duck.close()


def _parsed_names(sql: str) -> list[str]:
    """The names glint's parse gives the items of a query it cannot bind."""
    node = frontend.parse(sql)[0]
    while isinstance(node, (exp.Subquery, exp.SetOperation)):
        node = node.this
    out = []
    for item in node.expressions:
        if isinstance(item, exp.Alias):
            out.append(item.args["alias"].meta.get("display") or item.alias)
        else:
            out.append(item.name)
    return out


def glint_names(con, sql: str) -> list[str]:
    try:
        return con.sql(sql).names
    except (NotSupported, TypeMismatch):
        return _parsed_names(sql)


def test_names_match_duckdb(engines):
    duck, con = engines
    wrong = []
    for case in CASES:
        sql = _query(case)
        if sql in KNOWN:
            continue
        want = duck.sql(sql).columns
        got = glint_names(con, sql)
        if got != want:
            wrong.append(f"{sql}: glint {got}, DuckDB {want}")
    assert wrong == [], "\n".join(wrong)


def test_known_differences_still_differ(engines):
    """Each listed difference is real (a fix removes it from the list)."""
    duck, con = engines
    for sql in KNOWN:
        assert glint_names(con, sql) != duck.sql(sql).columns, sql


def test_names_of_results_and_derived_tables(engines):
    duck, con = engines
    for sql in [
        "SELECT x, y AS x, x + 1, x + 1 FROM t",
        "SELECT * FROM (SELECT x, y AS x, x + 1, x + 1 FROM t)",
        "SELECT * FROM (SELECT * FROM t, u) ORDER BY 1",
        "WITH c AS (SELECT upper(s), count(*) FROM t GROUP BY 1) SELECT * FROM c",
        "SELECT k FROM (SELECT 1 AS K) sub",
        "SELECT * FROM (VALUES (1, 2)) v(a, B)",
    ]:
        got, want = con.sql(sql).arrow(), duck.sql(sql).arrow().read_all()
        assert compare_tables(got, want, ordered=False, check_names=True) == [], sql


def test_a_derived_tables_deduplicated_name_is_its_column(engines):
    _, con = engines
    assert con.sql("SELECT x_1 FROM (SELECT x, y AS x FROM t)").fetchall() == [(2,)]
    assert con.sql('SELECT "(x + 1)" FROM (SELECT x + 1 FROM t)').fetchall() == [(2,)]


def test_created_table_and_view_columns(engines):
    duck, con = engines
    con.sql("CREATE TABLE names_t AS SELECT x + 1, upper(s) FROM t")
    assert list(con.table("names_t").schema) == ["(x + 1)", "upper(s)"]
    con.sql("CREATE VIEW names_v AS SELECT count(*), sum(x) FILTER (WHERE x > 0) FROM t")
    assert con.sql("SELECT * FROM names_v").names == ["count_star()", "sum(x) FILTER (WHERE (x > 0))"]


def test_registered_mixed_case_columns(device):
    con = glint.connect(device=device)
    con.register("mc", pa.table({"Mixed Case": [1], "Other": [2]}))
    assert con.sql("SELECT * FROM mc").names == ["Mixed Case", "Other"]
    assert con.sql('SELECT "mixed case", other, OTHER + 1 FROM mc').names == ["Mixed Case", "Other", "(OTHER + 1)"]
