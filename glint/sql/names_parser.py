"""The parse that result column names are read from.

DuckDB names an unaliased result column after its expression as the user
wrote it (``upper(s)``, ``substr(s, 1, 2)``, ``(x ** 2)``). glint's own parse
maps function calls to sqlglot's typed nodes, which forget how they were
spelled (``substr`` and ``substring`` become one node, ``date_diff``'s
arguments are reordered), so the names come from a second parse of the same
text in which every function call stays as written (an ``Anonymous`` call),
and the few spellings that sqlglot's parse loses (``IS NOT NULL`` against
``NOT ... IS NULL``, ``^`` against ``**``, an explicit ``NULLS LAST``, an
INTERVAL's literal, EXTRACT's part, a keyword function's case) are kept in
the nodes' ``meta``.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.tokens import TokenType


class Caret(exp.Pow):
    """``a ^ b`` (DuckDB prints it as written, apart from ``a ** b``)."""


class UnaryPlus(exp.Unary):
    """``+x``, which sqlglot drops and DuckDB prints as ``+(x)``."""


# the calls whose syntax is not name(args): kept, every other call stays Anonymous
_SYNTAX_FUNCTIONS = ("CAST", "TRY_CAST", "EXTRACT", "TRIM", "SUBSTRING", "POSITION", "OVERLAY")


class _Parser(DuckDB.Parser):
    FUNCTIONS: dict = {}
    FUNCTION_PARSERS = {k: v for k, v in DuckDB.Parser.FUNCTION_PARSERS.items() if k in _SYNTAX_FUNCTIONS}
    EXPONENT = {**DuckDB.Parser.EXPONENT, TokenType.CARET: Caret, TokenType.DSTAR: exp.Pow}
    UNARY_PARSERS = {
        **DuckDB.Parser.UNARY_PARSERS,
        TokenType.PLUS: lambda self: self.expression(UnaryPlus(this=self._parse_unary())),
    }

    def _tokens_since(self, start: int) -> list:
        return self._tokens[start : self._index]

    def _parse_is(self, this):
        out = super()._parse_is(this)
        if isinstance(out, exp.Not):
            # ``x IS NOT NULL`` (not ``NOT x IS NULL``): the NOT came from the IS
            out.meta["is_not"] = True
        return out

    def _parse_range(self, *args, **kwargs):
        out = super()._parse_range(*args, **kwargs)
        if isinstance(out, exp.Not) and self._prev is not None and self._prev.token_type == TokenType.NOTNULL:
            out.meta["is_not"] = True  # x NOTNULL
        return out

    def _parse_interval(self, *args, **kwargs):
        start = self._index
        out = super()._parse_interval(*args, **kwargs)
        if out is not None:
            out.meta["tokens"] = [(t.token_type, t.text) for t in self._tokens_since(start)]
        return out

    def _parse_extract(self):
        part = self._curr.text if self._curr else None
        out = super()._parse_extract()
        out.meta["part"] = part
        return out

    def _parse_ordered(self, *args, **kwargs):
        out = super()._parse_ordered(*args, **kwargs)
        if out is not None:
            last = [t.text.upper() for t in self._tokens[max(self._index - 2, 0) : self._index]]
            if len(last) == 2 and last[0] == "NULLS" and last[1] in ("FIRST", "LAST"):
                out.meta["nulls"] = last[1]
        return out

    def _parse_function_call(self, *args, **kwargs):
        token = self._curr
        out = super()._parse_function_call(*args, **kwargs)
        if out is not None and token is not None and not isinstance(out, exp.Anonymous):
            out.meta.setdefault("written", token.text)
        return out


class NamesDialect(DuckDB):
    """DuckDB's dialect, parsed with every function call as written."""

    Parser = _Parser


def parse_as_written(text: str, version: str | None) -> list:
    """The statements of ``text`` with their calls as written (see the module)."""
    dialect = NamesDialect(version=version) if version else NamesDialect()
    return sqlglot.parse(text, read=dialect)
