"""The string part of the fuzz generator: regular expressions, LIKE with
per-row patterns, and the VARCHAR functions (a mixin of
:class:`glint.testing.fuzz.generator.QueryGenerator`).

Patterns that come from columns are kept valid in every row, so that an
error can never depend on which rows an engine happens to evaluate: a
regular expression gets a suffix after the column (no trailing backslash
is then possible; the data holds no brackets or parentheses), and a LIKE
pattern with an ESCAPE gets a literal after the column (no lone escape
character at its end). Counts stay small (repeat, lpad), so results stay
small.

>>> from glint.testing.fuzz.data import make_data
>>> from glint.testing.fuzz.generator import QueryGenerator
>>> g = QueryGenerator(make_data(0, rows=10).info, seed=3)
>>> sqls = [g.generate().sql for _ in range(300)]
>>> any("REGEXP" in s.upper() for s in sqls), any(" LIKE " in s and "||" in s for s in sqls)
(True, True)
"""

from __future__ import annotations

from glint.testing.fuzz.sqltypes import BIGINT, BOOLEAN, INTEGER, VARCHAR, E, quote

REGEXES = [
    "a",
    "^a",
    "a$",
    "[a-c]+",
    "b.",
    "(a)(b)?",
    "\\.",
    "x*",
    "",
    "(?i)ab",
    "\\bx",
    "[^a ]",
    "\\p{L}+",
    "a|b",
    "^.$",
    "[[:upper:]]",
    "(\\w+) (\\w+)",
    "é|ü",
    "\\d",
    "_|%",
    "a{2,}",
    "^$",
]
REWRITES = ["", "X", "<\\0>", "\\\\", "[\\1]", "\\2\\1", "x\\y"]
NEEDLES = ["", "a", "b", "A", "ab", "é", "_", "%", " ", "abc", "ü"]
FILLS = ["x", "-", "é", "ab"]


class StringFunctions:
    """Mixin: expects the generator's r, chance, pick, feat, sub_e, literal, _m."""

    def _regex(self, scope, d, sub):
        """(a pattern expression, its SQL type is VARCHAR), mostly constant."""
        if self.chance(0.2):
            a = self.sub_e("str", scope, d, sub)
            self.feat("regex:column_pattern")
            tail = self.r.choice(["'.?'", "'$'", "'|z'"])
            return self._m(f"({a.sql} || {tail})", VARCHAR, a)
        return E(quote(self.r.choice(REGEXES)), VARCHAR)

    def _count(self, lo: int, hi: int, scope, d, sub, integer_only: bool = False):
        """A small count: a literal, or a column reduced modulo something."""
        cols = (
            [
                c
                for c in scope.columns("int")
                if c[1][1].kind == "INTEGER" or (not integer_only and c[1][1].kind == "BIGINT")
            ]
            if scope.group is None
            else []
        )
        if cols and self.chance(0.3):
            s, c = self.r.choice(cols)
            self.feat("strfn:per_row_count")
            return E(f"({s.alias}.{c[0]} % {hi})", c[1])
        return E(str(self.r.randint(lo, hi)), INTEGER)

    def gen_str_function(self, scope, d, sub):
        fn = self.pick(
            {
                "regexp_replace": 3,
                "regexp_extract": 2,
                "replace": 2,
                "split_part": 2,
                "pad": 2,
                "left_right": 2,
                "repeat": 1,
                "reverse": 1,
                "md5": 0.5,
                "concat_ws": 1.5,
                "trim": 1.5,
                "chr": 0.5,
            }
        )
        self.feat("strfn:" + fn)
        a = self.sub_e("str", scope, d, sub)
        if fn == "regexp_replace":
            p = self._regex(scope, d, sub)
            rw = quote(self.r.choice(REWRITES))
            opts = self.r.choice(["", "", ", 'g'", ", 'i'", ", 'gi'", ", 'l'", ", 's'"])
            return self._m(f"regexp_replace({a.sql}, {p.sql}, {rw}{opts})", VARCHAR, a, p)
        if fn == "regexp_extract":
            p = self._regex(scope, d, sub)
            g = self.r.choice(["", ", 0", ", 1", ", 2", ", 1, 'i'"])
            return self._m(f"regexp_extract({a.sql}, {p.sql}{g})", VARCHAR, a, p)
        if fn == "replace":
            b = self.sub_e("str", scope, d, sub) if self.chance(0.3) else self.literal("str")
            b = b if self.chance(0.6) else self._lit(self.r.choice(NEEDLES))
            c = self._lit(self.r.choice(["", "X", "üü", "-"]))
            return self._m(f"replace({a.sql}, {b.sql}, {c.sql})", VARCHAR, a, b)
        if fn == "split_part":
            delim = (
                self._lit(self.r.choice([",", " ", "a", "", "_", "ab"]))
                if self.chance(0.8)
                else self.sub_e("str", scope, d, sub)
            )
            i = self._count(-3, 4, scope, d, sub)
            return self._m(f"split_part({a.sql}, {delim.sql}, {i.sql})", VARCHAR, a, delim)
        if fn == "pad":
            n = self._count(0, 8, scope, d, sub, integer_only=True)
            side = self.r.choice(["lpad", "rpad"])
            return self._m(f"{side}({a.sql}, {n.sql}, {quote(self.r.choice(FILLS))})", VARCHAR, a)
        if fn == "left_right":
            n = self._count(-4, 6, scope, d, sub)
            return self._m(f"{self.r.choice(['left', 'right'])}({a.sql}, {n.sql})", VARCHAR, a)
        if fn == "repeat":
            return self._m(f"repeat({a.sql}, {self.r.randint(-1, 3)})", VARCHAR, a)
        if fn == "reverse":
            return self._m(f"reverse({a.sql})", VARCHAR, a)
        if fn == "md5":
            return self._m(f"md5({a.sql})", VARCHAR, a)
        if fn == "concat_ws":
            sep = self._lit(self.r.choice([",", "", " - "])) if self.chance(0.85) else self.sub_e("str", scope, d, sub)
            k = self.r.choice(["str", "str", "int", "dec", "date"])
            b = self.sub_e(k, scope, d, sub)
            if b.t.kind == "TIMESTAMP":
                b = self.sub_e("str", scope, d, sub)
            return self._m(f"concat_ws({sep.sql}, {a.sql}, {b.sql})", VARCHAR, a, b, sep)
        if fn == "trim":
            chars = self._lit(self.r.choice(["a", "ab ", "x", "", "é"]))
            side = self.r.choice(["trim", "ltrim", "rtrim"])
            return self._m(f"{side}({a.sql}, {chars.sql})", VARCHAR, a)
        n = self._count(65, 90, scope, d, sub, integer_only=True)
        if n.sql.startswith("("):  # a column: INTEGER % 90 is within -89..89
            return self._m(f"chr(100 + {n.sql})", VARCHAR)
        return self._m(f"chr({n.sql})", VARCHAR)

    def _lit(self, s: str):
        return E(quote(s), VARCHAR)

    def gen_string_predicate(self, scope, d, sub):
        kind = self.pick({"like_rows": 3, "regex": 3, "search": 2})
        a = self.sub_e("str", scope, d, sub)
        if kind == "like_rows":
            b = self.sub_e("str", scope, d, sub)
            op = self.r.choice(["LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE", "LIKE", "~~"])
            self.feat("like:column_pattern")
            if self.chance(0.3) and op != "~~":  # DuckDB's ~~ takes no ESCAPE
                return self._m(
                    f"({a.sql} {op} ({b.sql} || {quote(self.r.choice(['%', '_', 'x']))}) ESCAPE '\\')", BOOLEAN, a, b
                )
            pat = b.sql if self.chance(0.6) else f"('%' || {b.sql} || '%')"
            return self._m(f"({a.sql} {op} {pat})", BOOLEAN, a, b)
        if kind == "regex":
            p = self._regex(scope, d, sub)
            form = self.pick({"regexp_matches": 3, "regexp_full_match": 2, "~": 1, "!~": 0.5, "similar": 1})
            self.feat("regex:" + form)
            if form == "~" or form == "!~":
                return self._m(f"({a.sql} {form} {p.sql})", BOOLEAN, a, p)
            if form == "similar":
                neg = "NOT " if self.chance(0.3) else ""
                return self._m(f"({a.sql} {neg}SIMILAR TO {p.sql})", BOOLEAN, a, p)
            opts = self.r.choice(["", "", "", ", 'i'", ", 's'", ", 'l'"])
            return self._m(f"{form}({a.sql}, {p.sql}{opts})", BOOLEAN, a, p)
        fn = self.r.choice(["starts_with", "ends_with", "contains", "prefix", "suffix"])
        self.feat("strfn:" + fn)
        b = self.sub_e("str", scope, d, sub) if self.chance(0.4) else self._lit(self.r.choice(NEEDLES))
        return self._m(f"{fn}({a.sql}, {b.sql})", BOOLEAN, a, b)

    def gen_string_number(self, scope, d, sub):
        fn = self.pick({"strpos": 3, "ascii": 1, "unicode": 1, "strlen": 1, "bit_length": 0.5})
        self.feat("strfn:" + fn)
        a = self.sub_e("str", scope, d, sub)
        if fn == "strpos":
            b = self.sub_e("str", scope, d, sub) if self.chance(0.4) else self._lit(self.r.choice(NEEDLES))
            form = self.r.choice(["strpos({a}, {b})", "instr({a}, {b})", "position({b} IN {a})"])
            return self._m(form.format(a=a.sql, b=b.sql), BIGINT, a, b)
        t = INTEGER if fn in ("ascii", "unicode") else BIGINT
        return self._m(f"{fn}({a.sql})", t, a)
