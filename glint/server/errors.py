"""glint's errors as Flight statuses. pyarrow.flight gives a handler's
exception its gRPC status by its class:

| glint's error | status |
|---|---|
| ParseError, BinderError (CatalogError, ColumnNotFound, TypeMismatch), ExecutionError, GlintIOError, a malformed request | INVALID_ARGUMENT |
| NotSupported | UNIMPLEMENTED |
| PermissionDenied (a file outside the allowed directories) | PERMISSION_DENIED |
| OutOfMemory, a client past its queries at once, RankFailure | UNAVAILABLE |
| QueryTimeout | DEADLINE_EXCEEDED |
| Cancelled | CANCELLED |
| a wrong or missing token | UNAUTHENTICATED |
| anything else (a bug) | INTERNAL, and the traceback in the server's log |

pyarrow's Flight server cannot send RESOURCE_EXHAUSTED (it maps no exception
to it): out of memory is UNAVAILABLE, the code gRPC gives work worth trying
again later, and the message says out of memory. Each message is glint's own
(a bad query's names its line and column).

pyarrow sends INVALID_ARGUMENT and UNIMPLEMENTED for Python exceptions of
Arrow's classes, and appends the exception's formatted traceback to the
message; for glint's (:class:`InvalidQuery`, :class:`Unimplemented`) that
detail is their class's name only (:func:`short_details`), so that a client
sees glint's message and nothing of the server's code.
"""

from __future__ import annotations

import logging
import threading
import traceback
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.flight as flight

from glint.errors import (
    Cancelled,
    GlintError,
    NotSupported,
    OutOfMemory,
    PermissionDenied,
    QueryTimeout,
    RankFailure,
)
from glint.server.clients import TooManyQueries
from glint.server.commands import BadCommand

log = logging.getLogger("glint.server")


class InvalidQuery(pa.ArrowInvalid):
    """A statement or request glint refuses (INVALID_ARGUMENT)."""


class Unimplemented(pa.ArrowNotImplementedError):
    """Something glint does not do (UNIMPLEMENTED)."""


_patched = False
_patch_lock = threading.Lock()


def short_details() -> None:
    """Makes traceback.format_exception, which pyarrow calls to describe an
    exception a handler raised, give the class name alone for glint's
    InvalidQuery and Unimplemented (every other exception is formatted as
    before). Once per process."""
    global _patched
    with _patch_lock:
        if _patched:
            return
        _patched = True
        original = traceback.format_exception

        def format_exception(exc, /, *args, **kwargs):
            value = args[0] if args else kwargs.get("value", exc)
            if isinstance(value, (InvalidQuery, Unimplemented)):
                return [type(value).__name__]
            return original(exc, *args, **kwargs)

        traceback.format_exception = format_exception


def flight_error(e: BaseException) -> BaseException:
    """The exception to raise to pyarrow.flight for ``e``."""
    if isinstance(e, (flight.FlightError, pa.ArrowException)):
        return e
    msg = str(e) or type(e).__name__
    if isinstance(e, PermissionDenied):
        return flight.FlightUnauthorizedError(msg)
    if isinstance(e, QueryTimeout):
        return flight.FlightTimedOutError(msg)
    if isinstance(e, Cancelled):
        return flight.FlightCancelledError(msg)
    if isinstance(e, OutOfMemory):
        return flight.FlightUnavailableError(f"Out of Memory Error: {msg}")
    if isinstance(e, (TooManyQueries, RankFailure)):
        return flight.FlightUnavailableError(msg)
    if isinstance(e, NotSupported):
        return Unimplemented(msg)
    if isinstance(e, (GlintError, BadCommand)):
        return InvalidQuery(msg)
    log.error("internal error: %s: %s", type(e).__name__, e, exc_info=(type(e), e, e.__traceback__))
    return flight.FlightInternalError(
        f"internal error in glint: {type(e).__name__}: {msg} (the server's log has the traceback)"
    )


@contextmanager
def as_flight_errors():
    """Raises what a block raises as the Flight error of its status."""
    try:
        yield
    except Exception as e:  # noqa: BLE001 - every error gets a status
        raise flight_error(e) from None
