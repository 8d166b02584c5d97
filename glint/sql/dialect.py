"""The SQL dialect glint reads: DuckDB's, as of the version glint follows.

sqlglot reads ``a ~ b`` as regexp_matches for DuckDB 2.0 and as
regexp_full_match before it; DuckDB 1.4 (glint's reference) means the
latter, so every parse names the version.

>>> import sqlglot
>>> type(sqlglot.parse_one("SELECT 'abc' ~ 'a.c'", read=DIALECT).expressions[0]).__name__
'RegexpFullMatch'
"""

VERSION = "1.4.4"
DIALECT = f"duckdb, version={VERSION}"
