"""FROM clauses of the query generator (a mixin of
:class:`~glint.testing.fuzz.generator.QueryGenerator`): base tables, CTEs,
derived tables (with a deterministic ORDER BY ... LIMIT now and then) and
VALUES lists, joined by every kind of join (inner, left, right, full, cross,
comma, SEMI / ANTI, USING) on nullable one- and two-column keys, with
residual and non-equi conditions; the size of a join without keys is bounded.
"""

from __future__ import annotations

from glint.testing.fuzz.scopes import Scope, Source
from glint.testing.fuzz.sqltypes import parse_type
from glint.testing.fuzz.values import values_source

VALUES_SHARE = 0.025  # FROM items that are a VALUES list (about one query in nine has one)


class FromClauses:
    """Mixin: expects the generator's r, rv, chance, pick, feat, alias, info,
    tables, ctes, max_rows_product, and the other mixins' body and expr."""

    def base_source(self, max_rows: int | None = None) -> Source:
        names = [t for t in self.tables if max_rows is None or self.info[t].rows <= max_rows] or sorted(
            self.tables, key=lambda t: self.info[t].rows
        )[:1]
        # the fuzzing tables (t*) are the interesting ones; TPC-H tables now and then
        weights = [1.0 if n.startswith("t") and n[1:].isdigit() else 0.25 for n in names]
        name = self.r.choices(names, weights=weights)[0]
        ti = self.info[name]
        cols = [(c.name, parse_type(c.type), c.key, c.nosum) for c in ti.columns]
        return Source(self.alias("a"), cols, ti.rows, base=name)

    def source(self, depth: int, max_rows: int | None = None) -> tuple[Source, str]:
        if self.rv.random() < VALUES_SHARE:
            self.feat("values")
            return values_source(self.rv, self.alias("v"))
        x = self.r.random()
        if self.ctes and x < 0.25:
            c = self.r.choice(self.ctes)
            s = Source(self.alias("a"), c.cols, c.rows)
            return s, f"{c.alias} AS {s.alias}"
        if depth > 0 and x < 0.3:
            sel = self.body(depth - 1, None, None)
            sql = sel.sql
            if self.chance(0.2):  # a deterministic ORDER BY ... LIMIT inside
                sql += " ORDER BY " + ", ".join(str(i + 1) for i in range(len(sel.types)))
                sql += f" LIMIT {self.r.choice([1, 3, 10])}"
                self.feat("derived_limit")
            a = self.alias("q")
            cols = [(f"c{i}", t, k, ns) for i, (t, k, ns) in enumerate(zip(sel.types, sel.keys, sel.nosum))]
            self.feat("derived_table")
            return Source(a, cols, 50), f"({sql}) AS {a}"
        s = self.base_source(max_rows)
        return s, f"{s.base} AS {s.alias}"

    def key_pairs(self, left: list[Source], right: Source) -> list[tuple[str, str]]:
        pairs = []
        for ls in left:
            for lc in ls.cols:
                for rc in right.cols:
                    if lc[2] and lc[2] == rc[2]:
                        pairs.append((f"{ls.alias}.{lc[0]}", f"{right.alias}.{rc[0]}"))
        return pairs

    def same_kind_pairs(self, left: list[Source], right: Source) -> list[tuple[str, str]]:
        pairs = []
        for ls in left:
            for lc in ls.cols:
                for rc in right.cols:
                    if lc[1].family == rc[1].family and lc[1].family != "BOOLEAN":
                        pairs.append((f"{ls.alias}.{lc[0]}", f"{right.alias}.{rc[0]}"))
        return pairs

    def from_clause(self, depth: int, outer: Scope | None) -> tuple[Scope, str, list[str]]:
        n = self.pick({1: 45, 2: 40, 3: 15})
        first, sql = self.source(depth)
        visible = [first]
        conds: list[str] = []
        product = max(1, first.rows)  # a bound on the rows of the join so far
        for _ in range(n - 1):
            src, ssql = self.source(depth)
            pairs = self.key_pairs(visible, src)
            if not pairs and product * max(1, src.rows) > self.max_rows_product:
                src, ssql = self.source(0, max_rows=max(1, self.max_rows_product // product))
                pairs = self.key_pairs(visible, src)
            equi = bool(pairs)
            if not pairs:
                pairs = self.same_kind_pairs(visible, src)
            kind = self.pick(
                {
                    "JOIN": 30,
                    "LEFT JOIN": 18,
                    "RIGHT JOIN": 10,
                    "FULL JOIN": 10,
                    "CROSS JOIN": 5,
                    ",": 8,
                    "SEMI JOIN": 3,
                    "ANTI JOIN": 3,
                    "USING": 5,
                }
            )
            small = product * max(1, src.rows) <= self.max_rows_product
            if kind in ("CROSS JOIN", ",") and not small:
                kind = "JOIN"
            if not pairs and not small:
                # nothing to join on and too big for a nested loop: leave this source out
                continue
            if kind == "USING":
                common = [
                    c[0]
                    for c in src.cols
                    if c[2] and any(c[0] == vc[0] and c[2] == vc[2] for v in visible for vc in v.cols)
                ]
                # USING needs the name to be unambiguous on the left
                common = [c for c in common if sum(c == vc[0] for v in visible for vc in v.cols) == 1]
                if not common:
                    kind = "JOIN"
                else:
                    self.r.shuffle(common)
                    cols = common[: self.r.choice([1, 1, 2])]
                    jt = self.pick({"JOIN": 3, "LEFT JOIN": 2, "RIGHT JOIN": 1, "FULL JOIN": 1})
                    sql += f" {jt} {ssql} USING ({', '.join(cols)})"
                    self.feat("join:using")
                    visible.append(src)
                    product = max(product, src.rows) * 4
                    continue
            self.feat("join:" + kind.split()[0].lower().replace(",", "comma"))
            scope = Scope(visible + [src], outer)
            if kind == "CROSS JOIN":
                sql += f" CROSS JOIN {ssql}"
            elif kind == ",":
                sql += f", {ssql}"
                if pairs and (self.chance(0.8) or not small):
                    conds.append(self.join_condition(pairs, scope, equi or not small))
                    self.feat("join:comma_where")
            else:
                if pairs and (equi or not small or self.chance(0.7)):
                    on = self.join_condition(pairs, scope, small)
                else:
                    on = self.expr("bool", scope, 2, sub=False).sql
                    self.feat("join:nonequi")
                sql += f" {kind} {ssql} ON {on}"
            if kind in ("SEMI JOIN", "ANTI JOIN"):
                continue  # the right side is not visible afterwards
            visible.append(src)
            product = product * max(1, src.rows) if small else max(product, src.rows) * 4
        return Scope(visible, outer), sql, conds

    def join_condition(self, pairs: list[tuple[str, str]], scope: Scope, extra_ok: bool = True) -> str:
        self.r.shuffle(pairs)
        k = 1 if len(pairs) == 1 or self.chance(0.6) else 2
        parts = []
        for lhs, rhs in pairs[:k]:
            if self.chance(0.08):
                parts.append(f"{lhs} IS NOT DISTINCT FROM {rhs}")
            else:
                parts.append(f"{lhs} = {rhs}")
        if k == 2:
            self.feat("join:multikey")
        if self.chance(0.25):
            parts.append(self.expr("bool", scope, 1, sub=False).sql)
            self.feat("join:residual")
        cond = " AND ".join(parts)
        if extra_ok and self.chance(0.05):
            cond = f"({cond}) OR {self.expr('bool', scope, 1, sub=False).sql}"
            self.feat("join:or")
        return cond
