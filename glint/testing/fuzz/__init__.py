"""Differential SQL fuzzing of glint against DuckDB.

- :mod:`.data`: deterministic tables full of NULLs, duplicates, skew and extreme
  values (plus, optionally, TPC-H SF 0.01), registered into both engines.
- :mod:`.generator`: a type-aware random query generator (DuckDB dialect),
  put together from a mixin per clause (:mod:`.joins`, :mod:`.leaves`, :mod:`.expressions`,
  :mod:`.predicates`, :mod:`.aggregates` with :mod:`.grouping`,
  :mod:`.windows`, :mod:`.temporal`, :mod:`.gen_strings`) over
  :mod:`.sqltypes`, :mod:`.scopes` and :mod:`.values`.
- :mod:`.runner`: runs each query in glint and DuckDB (:mod:`.engines`: glint
  in a worker process with a time limit) and classifies the outcome
  (:mod:`.classify`, :mod:`.results`, :mod:`.oracle`, :mod:`.known_bugs`);
  ``glint fuzz`` is its CLI.
- :mod:`.reduce`: shrinks a failing query and its data, and writes a
  reproducer (by default under the system's temporary directory) whose
  ``repro.test`` can be appended to tests/sqllogic/fuzz/regressions.test.

Goal: glint answers exactly as DuckDB does, or refuses with a clear
NotSupported / error. A wrong answer or a crash is the worst outcome.
"""
