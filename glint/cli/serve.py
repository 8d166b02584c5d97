"""``glint serve``: the tables of ``--parquet`` / ``--csv`` served over Arrow
Flight SQL (glint.server) until the process is stopped (Ctrl-C, SIGTERM).

Clients must send the token (``--token`` or GLINT_TOKEN) when there is one;
binding an address other than loopback without one is refused. SQL reads and
writes files only under ``--allow-dir`` (default: the served data
directories). See docs/server.md.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import sys
from pathlib import Path

from glint.cli.common import EXIT_OK, collect_sources, connect_options, register_sources
from glint.errors import GlintError, GlintIOError
from glint.io.file_access import static_prefix

DEFAULT_PORT = 31337


def add_arguments(sp) -> None:
    """``glint serve``'s own options (the data sources, device, memory and
    rank options are added as for ``glint sql``)."""
    sp.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    sp.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: a free one)")
    sp.add_argument(
        "--token",
        default=None,
        help="clients must send 'authorization: Bearer TOKEN' (default: $GLINT_TOKEN; required off loopback)",
    )
    sp.add_argument("--tls-cert", metavar="PEM", help="serve over TLS with this certificate (with --tls-key)")
    sp.add_argument("--tls-key", metavar="PEM", help="the certificate's private key")
    sp.add_argument(
        "--allow-dir",
        action="append",
        metavar="DIR",
        help="a directory whose files SQL may read and write (FROM 'file', read_csv, COPY); repeatable "
        "(default: the directories of --parquet and --csv)",
    )
    sp.add_argument(
        "--max-client-queries",
        type=int,
        default=4,
        metavar="N",
        help="queries one client may run at once (default 4; 0: no limit)",
    )
    sp.add_argument(
        "--query-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="a statement running longer (queued time included) is stopped (default: no limit)",
    )
    sp.add_argument(
        "--max-running",
        type=int,
        default=None,
        metavar="N",
        help="queries on the device at once (default: as many as its memory budget admits)",
    )


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (reachable from this machine only).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("::1"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def data_directories(parquet: list[str] | None, csv: list[str] | None) -> list[str]:
    """The directories of the served sources: a directory itself, a file's
    directory, a glob's directory before its first wildcard."""
    out: list[str] = []
    for spec in list(parquet or []) + list(csv or []):
        path = spec.split("=", 1)[1] if "=" in spec and not os.path.exists(spec) else spec
        p = os.path.expanduser(path)
        if os.path.isdir(p):
            d = p
        elif any(c in p for c in "*?[") and not os.path.exists(p):
            d = static_prefix(p)
        else:
            d = os.path.dirname(os.path.abspath(p))
        d = os.path.abspath(d)
        if d not in out:
            out.append(d)
    return out


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise GlintIOError(f"cannot read the TLS {what} {path!r}: {e.strerror or e}") from None


def cmd_serve(args) -> int:
    token = args.token or os.environ.get("GLINT_TOKEN") or None
    if not is_loopback(args.host) and token is None:
        raise GlintError(
            f"refusing to serve on {args.host} without a token: anyone who can reach it could run SQL. "
            "Give --token TOKEN (or set GLINT_TOKEN), or listen on 127.0.0.1"
        )
    if bool(args.tls_cert) != bool(args.tls_key):
        raise GlintError("TLS needs both --tls-cert and --tls-key")
    if not is_loopback(args.host) and not args.tls_cert:
        print(
            f"glint serve: warning: without TLS (--tls-cert, --tls-key) the token and the data cross the "
            f"network from {args.host} in the clear",
            file=sys.stderr,
        )
    tls = [(_read(args.tls_cert, "certificate"), _read(args.tls_key, "key"))] if args.tls_cert else None
    try:  # (the server's protobuf is an optional dependency: glint[server])
        from glint.server.flight import GlintFlightServer, ServerOptions
    except ImportError as e:
        raise GlintError(f"glint serve needs {e.name or 'protobuf'}: pip install 'glint[server]'") from None
    sources = collect_sources(args.parquet, args.csv)
    allowed = [os.path.abspath(os.path.expanduser(d)) for d in args.allow_dir or []] or data_directories(
        args.parquet, args.csv
    )
    import glint

    opts = connect_options(args)
    con = glint.connect(device=args.device, enable_external_access=False, allowed_directories=allowed, **opts)
    try:
        register_sources(con, sources)
        options = ServerOptions(
            token=token,
            max_client_queries=args.max_client_queries or None,
            query_timeout=args.query_timeout,
            max_running=args.max_running,
        )
        scheme = "grpc+tls" if tls else "grpc"
        host = f"[{args.host}]" if ":" in args.host else args.host
        server = GlintFlightServer(con, f"{scheme}://{host}:{args.port}", options, tls)
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
        tables = len(con.table_names())
        ranks = getattr(con, "ranks", None)
        where = f"{ranks} ranks on {con.device.type}" if ranks is not None else f"{con.device}"
        print(
            f"glint serve: listening on {scheme}://{host}:{server.port} ({tables} table{'s' if tables != 1 else ''} "
            f"on {where}; {'token required' if token else 'no token'}; files under "
            f"{', '.join(allowed) if allowed else 'no directory'})",
            flush=True,
        )
        server.serve()
    finally:
        con.close()
    return EXIT_OK
