"""Differential SQL fuzzing of glint against DuckDB.

- :mod:`.data`: deterministic tables full of NULLs, duplicates, skew and extreme
  values (plus, optionally, TPC-H SF 0.01), registered into both engines.
- :mod:`.generator`: a type-aware random query generator (DuckDB dialect).
- :mod:`.runner`: runs each query in glint (in a worker process with a time
  limit) and in DuckDB, and classifies the outcome; ``glint fuzz`` is its CLI.
- :mod:`.reduce`: shrinks a failing query and its data, and writes a reproducer.

Goal: glint answers exactly as DuckDB does, or refuses with a clear
NotSupported / error. A wrong answer or a crash is the worst outcome.
"""
