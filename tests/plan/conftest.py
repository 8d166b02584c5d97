"""Fixtures of the plan tests: a module's ``tables`` (name -> Arrow table)
registered on a glint connection of the test device and on DuckDB."""

from __future__ import annotations

import duckdb
import pytest

import glint


@pytest.fixture(scope="module")
def con(device, tables):
    c = glint.connect(device=device)
    for name, t in tables.items():
        c.register(name, t)
    yield c
    c.close()


@pytest.fixture(scope="module")
def duck(tables):
    d = duckdb.connect()
    for name, t in tables.items():
        d.register(name, t)
    yield d
    d.close()
