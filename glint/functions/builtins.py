"""glint's built-in functions: the registry every binder and evaluator uses.

>>> BUILTINS.lookup("ucase").name, BUILTINS.lookup("variance", AGGREGATE).name
('upper', 'var_samp')
"""

from __future__ import annotations

from glint.functions import (
    casts,
    conditional,
    numeric,
    numeric_math,
    numeric_rounding,
    operators,
    table_functions,
    windows,
)
from glint.functions.aggregates import definitions as aggregates
from glint.functions.aggregates import definitions_extra as aggregates_extra
from glint.functions.dates import definitions as dates
from glint.functions.registry import AGGREGATE, Registry  # noqa: F401  (AGGREGATE: the doctest)
from glint.functions.strings import definitions as strings

BUILTINS = Registry(
    [
        *operators.FUNCTIONS,
        *numeric.FUNCTIONS,
        *numeric_rounding.FUNCTIONS,
        *numeric_math.FUNCTIONS,
        *casts.FUNCTIONS,
        *conditional.FUNCTIONS,
        *strings.FUNCTIONS,
        *dates.FUNCTIONS,
        *aggregates.FUNCTIONS,
        *aggregates_extra.FUNCTIONS,
        *windows.FUNCTIONS,
        *table_functions.FUNCTIONS,
    ]
)
