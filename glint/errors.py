"""glint's exception types. Everything the engine raises to a user derives from
:class:`GlintError`; the CLI prints these without a traceback.

>>> try:
...     raise NotSupported("window functions")
... except GlintError as e:
...     print(e)
Not supported: window functions
"""

from __future__ import annotations

import difflib


class GlintError(Exception):
    """Base class of every error glint raises on purpose."""


class ParseError(GlintError):
    """SQL text that does not parse; the message names line and column."""


class BinderError(GlintError):
    """SQL that parses but names something unknown or is ill-formed."""


class CatalogError(BinderError):
    """Unknown table or view."""


class ColumnNotFound(BinderError):
    """Unknown column."""


class TypeMismatch(BinderError):
    """An expression applied to types it does not accept."""


class NotSupported(GlintError):
    """Valid SQL that glint does not run yet; names the construct."""

    def __init__(self, construct: str):
        super().__init__(f"Not supported: {construct}")
        self.construct = construct

    def __reduce__(self):
        return type(self), (self.construct,)


class GlintIOError(GlintError):
    """A file that is missing, unreadable or not in the expected format."""


class PermissionDenied(GlintError):
    """A file that SQL may not read or write: outside the allowed directories
    of a connection without external access (``enable_external_access`` off)."""


class Cancelled(GlintError):
    """A query stopped before its end: cancelled by its client, or past its
    time limit (:class:`QueryTimeout`)."""


class QueryTimeout(Cancelled):
    """A query that ran past its time limit."""


class ExecutionError(GlintError):
    """A run-time error the query itself causes (division by zero, overflow...)."""


class ConstraintError(ExecutionError):
    """Rows an INSERT or UPDATE would store break a table's constraint (NOT NULL)."""


class OutOfMemory(ExecutionError):
    """A device ran out of memory; names the operator and the bytes it wanted."""


class Interrupted(GlintError):
    """A query cancelled while it ran (``Connection.interrupt()``, Ctrl-C in
    the shell); the connection stays usable."""

    def __init__(self, message: str = "Interrupted: the query was cancelled"):
        super().__init__(message)


class RankFailure(GlintError):
    """A rank of a distributed connection died, timed out or lost contact;
    names the rank (``rank``: its number, or None when it is not known). The
    connection is closed: open a new one to run queries again."""

    def __init__(self, message: str, rank: int | None = None):
        super().__init__(message)
        self.rank = rank

    def __reduce__(self):
        return type(self), (str(self), self.rank)


def did_you_mean(name: str, candidates) -> str:
    """A ' (did you mean "x"?)' suffix for the closest candidate, or ''.

    >>> did_you_mean("lineitm", ["orders", "lineitem"])
    ' (did you mean "lineitem"?)'
    >>> did_you_mean("zzz", ["orders"])
    ''
    """
    close = difflib.get_close_matches(name.lower(), [str(c).lower() for c in candidates], n=1, cutoff=0.6)
    if not close:
        return ""
    original = {str(c).lower(): str(c) for c in candidates}[close[0]]
    return f' (did you mean "{original}"?)'
