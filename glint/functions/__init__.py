"""The SQL functions: the function registry (:mod:`.registry`; every
built-in function in :mod:`.builtins`), the functions' definitions and
implementations by area (:mod:`.operators`, :mod:`.numeric`, :mod:`.casts`,
:mod:`.conditional`, :mod:`.strings`, :mod:`.dates`, :mod:`.aggregates`,
:mod:`.windows`, :mod:`.table_functions`), the evaluation of typed
expressions over columns (:mod:`.evaluate`) and the generated reference
(:mod:`.reference`). It sits between the plan (below) and the SQL binder
and the executor (above)."""
