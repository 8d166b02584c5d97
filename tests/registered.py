"""Connections with Arrow tables registered under their names: glint on a
test's device and DuckDB, the oracle, side by side."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import glint


def glint_with(tables: dict[str, pa.Table], device: str, **options):
    """A glint connection on ``device`` with ``tables`` registered."""
    con = glint.connect(device=device, **options)
    for name, table in tables.items():
        con.register(name, table)
    return con


def duckdb_with(tables: dict[str, pa.Table]):
    """A DuckDB connection with ``tables`` registered."""
    con = duckdb.connect()
    for name, table in tables.items():
        con.register(name, table)
    return con


def spy_on(monkeypatch, owner, name: str, record=lambda out: out) -> list:
    """Wrap ``owner.name`` so that ``record(result)`` of each call lands in the
    returned list (the call itself is unchanged)."""
    seen = []
    real = getattr(owner, name)

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        seen.append(record(out))
        return out

    monkeypatch.setattr(owner, name, spy)
    return seen


def rule_connections(rule: str):
    """Module fixtures ``con`` (glint with every rule), ``plain`` (glint with
    the optimizer rule ``rule`` off) and ``duck`` (the oracle) over the
    module's ``tables`` fixture, for a test that compares a rule's plans:
    ``con, plain, duck = rule_connections("...")``."""

    @pytest.fixture(scope="module")
    def con(device, tables):
        c = glint_with(tables, device)
        yield c
        c.close()

    @pytest.fixture(scope="module")
    def plain(device, tables):
        c = glint_with(tables, device, optimizer={rule: False})
        yield c
        c.close()

    return con, plain, duck_fixture()


def duck_fixture():
    """A module fixture ``duck``: DuckDB over the module's ``tables`` fixture."""

    @pytest.fixture(scope="module")
    def duck(tables):
        d = duckdb_with(tables)
        yield d
        d.close()

    return duck
