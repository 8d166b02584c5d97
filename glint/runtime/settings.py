"""A connection's settings: one typed, checked :class:`Settings` object,
built once per connection from ``glint.connect()``'s keyword arguments, then
the ``GLINT_*`` environment variables, then the defaults, and handed to
everything that reads a setting (the connection, each run's ExecContext,
the scan's reader). No other module reads a ``GLINT_*`` variable for a
setting.

Each field carries its :class:`Setting`: the SQL / keyword name (the field's
name), the environment variable, the type and unit, the default, the range,
a one-line description, and its scope: ``connection`` (``SET name = value``
changes it on an open connection, from the next query on), ``fixed`` (fixed
when the connection is created) or ``process`` (fixed for the process by
the first connection that creates what it sizes: the thread pools, the
pinned buffers, the scans' CUDA streams). A value that does not parse or is
out of range is a GlintError naming the setting, or the environment
variable it came from.

>>> s = Settings.build({"chunk_rows": 4096}, environ={"GLINT_CHUNK_ROWS": "64", "GLINT_SCAN_PRIORITY": "1"})
>>> s.chunk_rows, s.scan_priority, s.read_gap
(4096, 1, 1048576)
>>> Settings.build(environ={"GLINT_SCAN_PRIORITY": "3"})
Traceback (most recent call last):
...
glint.errors.GlintError: GLINT_SCAN_PRIORITY must be between 0 and 2, got 3
>>> Settings.build(environ={"GLINT_READ_GAP": "lots"})
Traceback (most recent call last):
...
glint.errors.GlintError: GLINT_READ_GAP must be a whole number, got 'lots'
>>> Settings.build({"raw_index_block": 0})
Traceback (most recent call last):
...
glint.errors.GlintError: raw_index_block must be at least 1, got 0
>>> Settings().with_value("MEMORY_LIMIT", "16GB").memory_limit
17179869184
"""

from __future__ import annotations

import difflib
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace

from glint.errors import GlintError
from glint.kernels.backend import enable_triton
from glint.kernels.hash_table import enable_hash_tables
from glint.runtime import trace as _trace
from glint.runtime.memory import format_bytes, parse_size

# scopes: when a setting may change
CONNECTION = "connection"  # SET changes it on an open connection (from the next query on)
FIXED = "fixed"  # fixed when the connection is created
PROCESS = "process"  # fixed for the process by the first connection that creates what it sizes

_SCOPE_TEXT = {
    CONNECTION: "SET changes it on an open connection, from the next query on",
    FIXED: "fixed when the connection is created",
    PROCESS: "fixed for the process by the first connection that creates the thread pools, pinned buffers "
    "or streams it sizes",
}
# SQL type names of the kinds (glint_settings().input_type, as duckdb_settings() names them)
_INPUT_TYPES = {
    "integer": "BIGINT",
    "boolean": "BOOLEAN",
    "size": "VARCHAR",
    "text": "VARCHAR",
    "choice": "VARCHAR",
    "paths": "VARCHAR[]",
}
_TRUE = frozenset(("1", "true", "on", "yes"))
_FALSE = frozenset(("0", "false", "off", "no"))


@dataclass(frozen=True)
class Setting:
    """What a setting is (the metadata of a :class:`Settings` field).

    ``kind``: "integer", "size" (bytes, or a text such as "16GB"),
    "boolean", "text" or "choice" (one of ``choices``). ``default``: None
    where glint picks the value itself (``auto`` says how). ``lo``, ``hi``:
    an integer's range; ``zero``: a size of 0 is allowed (it turns
    something off). ``requirement``: the error's own words where they
    differ from the kind's."""

    env: str
    kind: str
    default: object
    description: str
    scope: str
    unit: str = ""
    lo: int | None = None
    hi: int | None = None
    choices: tuple = ()
    auto: str = ""
    zero: bool = False
    requirement: str = ""
    name: str = ""

    @property
    def input_type(self) -> str:
        return _INPUT_TYPES[self.kind]

    def parse(self, value, source: str):
        """``value`` (a Python value, or a text from the environment or SQL)
        as this setting's type; GlintError naming ``source`` when it is not one."""
        try:
            return _PARSERS[self.kind](self, value, source)
        except GlintError as e:
            if self.requirement:
                raise GlintError(f"{source} {self.requirement}, got {value!r}") from None
            raise e from None

    def why_fixed(self) -> str:
        """Why SET refuses this setting (its scope is not "connection")."""
        if self.scope == PROCESS:
            return (
                f"{self.name} cannot be changed on an open connection: it is fixed for the process by its "
                f"first connection (pass {self.name}=... to the first glint.connect(), or set {self.env})"
            )
        return (
            f"{self.name} cannot be changed on an open connection: it is fixed when the connection is "
            f"created (pass {self.name}=... to glint.connect(), or set {self.env})"
        )

    def text(self, value) -> str | None:
        """A value as glint_settings() shows it (None: NULL)."""
        if value is None:
            return None
        if self.kind == "boolean":
            return "true" if value else "false"
        if self.kind == "size":
            return format_bytes(value)
        if self.kind == "paths":
            return "[" + ", ".join(value) + "]"
        return str(value)

    def sql_value(self, value):
        """A value as current_setting() gives it: integers and booleans as
        such, everything else as text."""
        return value if self.kind in ("integer", "boolean") else self.text(value)


def _parse_integer(s: Setting, value, source: str) -> int:
    if isinstance(value, str):
        raw = value.strip()
        try:
            value = int(raw)
        except ValueError:
            raise GlintError(f"{source} must be a whole number, got {raw!r}") from None
    elif isinstance(value, bool) or not isinstance(value, int):
        raise GlintError(f"{source} must be a whole number, got {value!r}")
    if (s.lo is not None and value < s.lo) or (s.hi is not None and value > s.hi):
        bound = f"between {s.lo} and {s.hi}" if s.hi is not None else f"at least {s.lo}"
        raise GlintError(f"{source} must be {bound}, got {value}")
    return value


def _parse_size(s: Setting, value, source: str) -> int:
    zero = (type(value) is int and value == 0) or (isinstance(value, str) and value.strip() == "0")
    if s.zero and zero:
        return 0
    try:
        return parse_size(value.strip() if isinstance(value, str) else value)
    except GlintError as e:
        raise GlintError(f"{source}: {e}") from None


def _parse_boolean(s: Setting, value, source: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, (str, int)) else None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise GlintError(f"{source} must be a boolean (true or false, on or off, 1 or 0), got {value!r}")


def _parse_choice(s: Setting, value, source: str) -> str:
    text = value.strip().lower() if isinstance(value, str) else None
    if text not in s.choices:
        names = ", ".join(repr(c) for c in s.choices[:-1]) + f" or {s.choices[-1]!r}"
        raise GlintError(f"{source} must be one of {names}, got {value!r}")
    return text


def _parse_text(s: Setting, value, source: str) -> str:
    if not isinstance(value, (str, os.PathLike)) or not os.fspath(value).strip():
        raise GlintError(f"{source} must be a non-empty text, got {value!r}")
    return os.fspath(value)


def _parse_paths(s: Setting, value, source: str) -> tuple[str, ...]:
    """A list of paths: a Python list or tuple, or a text of paths separated
    by the system's path separator (":" on Linux), as the environment gives it.
    Each made absolute (relative to the working directory)."""
    if isinstance(value, (str, os.PathLike)):
        value = [p for p in os.fspath(value).split(os.pathsep) if p.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(p, (str, os.PathLike)) for p in value):
        raise GlintError(f"{source} must be a list of paths, got {value!r}")
    return tuple(os.path.abspath(os.path.expanduser(os.fspath(p))) for p in value)


_PARSERS = {
    "integer": _parse_integer,
    "size": _parse_size,
    "boolean": _parse_boolean,
    "choice": _parse_choice,
    "text": _parse_text,
    "paths": _parse_paths,
}


def _setting(env: str, kind: str, default, description: str, scope: str = CONNECTION, **meta):
    return field(default=default, metadata={"setting": Setting(env, kind, default, description, scope, **meta)})


@dataclass(frozen=True)
class Settings:
    """Every setting of a connection (see the module's docstring; each
    field's metadata is its :class:`Setting`, :func:`setting` finds one by
    name). Immutable: :meth:`with_value` gives a changed copy."""

    # ------------------------------------------------------------ memory and results
    memory_limit: int | None = _setting(
        "GLINT_MEMORY_LIMIT",
        "size",
        None,
        "memory glint may use on its device: GPU memory on CUDA (the allocator is capped at it from 1 GiB "
        "up), working memory on the CPU; the table cache and the operators' state stay within it",
        unit="bytes",
        auto="the GPU's free memory less 5%, or 60% of the host memory available",
    )
    chunk_rows: int | None = _setting(
        "GLINT_CHUNK_ROWS",
        "integer",
        None,
        "rows per chunk (morsel) of a scan",
        unit="rows",
        lo=1,
        requirement="must be a positive integer",
        auto="from the memory limit: 2**14 to 2**28 on a GPU, up to 2**21 on the CPU",
    )
    host_cache_limit: int | None = _setting(
        "GLINT_HOST_CACHE_LIMIT",
        "size",
        None,
        "bytes of table data kept in host memory as the table cache's second tier (0: none); "
        "given, or with a memory_limit given, chunks are always kept, else only once the device cache "
        "has had to evict",
        FIXED,
        unit="bytes",
        zero=True,
        auto="40% of the host's memory on CUDA (at most 60% of what is free when the connection is made), "
        "shared by the ranks on the host; none on the CPU",
    )
    spill_dir: str | None = _setting(
        "GLINT_SPILL_DIR",
        "text",
        None,
        "where operators spill once pinned host memory is spent",
        FIXED,
        unit="path",
        auto="the system's temporary directory",
    )
    host_spill_limit: int | None = _setting(
        "GLINT_HOST_SPILL_LIMIT",
        "size",
        None,
        "bytes of host memory that spilled batches may take before they go to disk",
        FIXED,
        unit="bytes",
        auto="half of the host memory available when a batch spills",
    )
    result_limit: int | None = _setting(
        "GLINT_RESULT_LIMIT",
        "size",
        None,
        "bytes of a query's result glint holds on the host before the query fails (ResultTooLarge)",
        unit="bytes",
        auto="70% of the host memory available when the query starts",
    )
    # ------------------------------------------------------------ files named in SQL
    enable_external_access: bool = _setting(
        "GLINT_ENABLE_EXTERNAL_ACCESS",
        "boolean",
        True,
        "SQL may read and write files anywhere (FROM 'file', read_csv, read_parquet, COPY); off: only "
        "under allowed_directories, other paths are refused with a permission error (as DuckDB's setting)",
        FIXED,
    )
    allowed_directories: tuple = _setting(
        "GLINT_ALLOWED_DIRECTORIES",
        "paths",
        (),
        "the directories whose files SQL may read and write when enable_external_access is off (their real "
        "paths: a symbolic link or '..' that leads out is refused); the environment variable separates them by ':'",
        FIXED,
    )
    recursion_max_iterations: int = _setting(
        "GLINT_RECURSION_MAX_ITERATIONS",
        "integer",
        100_000,
        "steps a WITH RECURSIVE query may take before it fails (a recursion that never ends)",
        unit="steps",
        lo=1,
    )
    recursion_max_rows: int = _setting(
        "GLINT_RECURSION_MAX_ROWS",
        "integer",
        1_000_000_000,
        "rows a WITH RECURSIVE query's recursion may make before it fails",
        unit="rows",
        lo=1,
    )
    cross_product_limit: int | None = _setting(
        "GLINT_CROSS_PRODUCT_LIMIT",
        "size",
        None,
        "bytes a cross product (a join without conditions, whose row count its inputs' counts give exactly) "
        "may have where it is held whole (the query's result, a join's build side) before the query is "
        "refused when it is planned; 0 turns the check off",
        unit="bytes",
        zero=True,
        auto="the result limit: 70% of the host memory available when the query is planned",
    )
    plan_cache_entries: int = _setting(
        "GLINT_PLAN_CACHE_ENTRIES",
        "integer",
        64,
        "plans of queries kept by their text, so that a query run again on the connection skips parsing, "
        "binding and optimizing while its tables, views and settings are unchanged (0: none)",
        unit="plans",
        lo=0,
    )
    footer_threads: int = _setting(
        "GLINT_FOOTER_THREADS",
        "integer",
        8,
        "threads that read the footers of several Parquet tables registered at once",
        unit="threads",
        lo=1,
    )

    # ------------------------------------------------------------ scans
    parquet_decode: str = _setting(
        "GLINT_PARQUET_DECODE",
        "choice",
        "auto",
        "which Parquet columns the scan's device decodes from their pages: 'raw' those the GPU decodes from "
        "their bytes as stored (the CPU's reference decoder on the CPU), 'device' also the numeric columns "
        "whose pages the host plans, 'host' none (all by pyarrow); 'auto' is 'raw' on CUDA, 'host' on the CPU",
        choices=("auto", "raw", "device", "host"),
    )
    read_ahead: bool = _setting(
        "GLINT_READ_AHEAD",
        "boolean",
        True,
        "every scan of a multi-table query starts reading when the run "
        "starts, within a quarter of the memory the cache could still take",
    )
    narrow_uploads: bool = _setting(
        "GLINT_NARROW_UPLOADS",
        "boolean",
        True,
        "integer columns whose chunk statistics fit a narrower type are copied to the device in it and widened there",
    )
    compact_cache: str = _setting(
        "GLINT_COMPACT_CACHE",
        "choice",
        "auto",
        "table chunks in the device cache kept in the narrowest integer type that holds their values, "
        "widened when a scan takes them: 'auto' on CUDA under a memory limit the user set or while the "
        "cache evicts for room (in the last eight runs), 'on' always, 'off' never",
        choices=("auto", "on", "off"),
    )
    raw_together: bool = _setting(
        "GLINT_RAW_TOGETHER",
        "boolean",
        True,
        "a chunk's columns decoded from their bytes as stored go "
        "through the page kernels together (off: one column at a time)",
    )
    host_pages: bool = _setting(
        "GLINT_HOST_PAGES",
        "boolean",
        True,
        "the host tier also keeps the column chunks the GPU decodes as they are stored (compressed Parquet "
        "pages, in pinned memory), copied up from there instead of read from their files again; "
        "within host_cache_limit",
        FIXED,
    )
    host_pages_decompressed: bool = _setting(
        "GLINT_HOST_PAGES_DECOMPRESSED",
        "boolean",
        True,
        "the host tier keeps a snappy column chunk with its pages' bodies decompressed by the host, once, "
        "when it is filled (their dictionary and bit-packed encodings stay): the GPU then only decodes the "
        "encodings (off: the pages as stored, decompressed on the GPU at every scan)",
        FIXED,
    )
    raw_strings: bool = _setting(
        "GLINT_RAW_STRINGS",
        "boolean",
        True,
        "low-cardinality string columns are decoded on the device as "
        "codes into a dictionary per scan chunk (off: by pyarrow)",
    )
    host_dictionaries: bool = _setting(
        "GLINT_HOST_DICTIONARIES",
        "boolean",
        False,
        "large snappy dictionary pages of raw column chunks are "
        "decompressed by the decoding threads instead of on the GPU",
    )
    snappy_split: bool = _setting(
        "GLINT_SNAPPY_SPLIT",
        "boolean",
        True,
        "large snappy pages are cut into 64 KiB blocks decompressed side by side on the GPU (off: one program a page)",
    )
    upload_ahead: int = _setting(
        "GLINT_UPLOAD_AHEAD",
        "integer",
        2,
        "chunks whose copies to the GPU start before the oldest started one is decoded and handed on",
        unit="chunks",
        lo=1,
    )
    scan_priority: int = _setting(
        "GLINT_SCAN_PRIORITY",
        "integer",
        2,
        "order of the scans' tasks in the shared pools: 2 by (chunk, "
        "scan), every scan's first chunk first; 1 by (scan, chunk); 0 first come, first served",
        lo=0,
        hi=2,
    )
    string_task_groups: int = _setting(
        "GLINT_STRING_TASK_GROUPS",
        "integer",
        64,
        "row groups whose string dictionary pages one decoding task reads",
        unit="row groups",
        lo=1,
    )
    read_gap: int = _setting(
        "GLINT_READ_GAP",
        "integer",
        1 << 20,
        "file bytes between two column chunks up to which the staging reads both with one system call",
        unit="bytes",
        lo=0,
    )
    run_gap: int = _setting(
        "GLINT_RUN_GAP",
        "integer",
        256 << 10,
        "file bytes between two column chunks up to which a scan chunk "
        "stages and copies them up as one run (the bytes between too)",
        unit="bytes",
        lo=0,
    )
    raw_index_block: int = _setting(
        "GLINT_RAW_INDEX_BLOCK",
        "integer",
        64,
        "row groups of a Parquet file whose column chunk entries are "
        "read from the footer at once, when a scan first needs one of them",
        FIXED,
        unit="row groups",
        lo=1,
    )

    # ------------------------------------------------------------ the process's threads, buffers and kernels
    decode_threads: int = _setting(
        "GLINT_DECODE_THREADS",
        "integer",
        0,
        "threads that decode Parquet row groups (0: one per core, shared by the ranks of the host, at least 2)",
        PROCESS,
        unit="threads",
        lo=0,
    )
    staging_threads: int = _setting(
        "GLINT_STAGING_THREADS",
        "integer",
        0,
        "threads that fill pinned buffers and start their copies to the GPU (0: a quarter of the cores, at least 4)",
        PROCESS,
        unit="threads",
        lo=0,
    )
    gil_switch_interval: int | None = _setting(
        "GLINT_GIL_SWITCH_INTERVAL",
        "integer",
        None,
        "how long a thread holds Python's interpreter lock before one waiting for it gets it "
        "(sys.setswitchinterval), set by the first CUDA connection: the query's thread releases the "
        "lock at every torch call and waited up to Python's 5 ms to get it back from the scan threads "
        "(0: the interpreter's own, left as it is)",
        PROCESS,
        unit="microseconds",
        lo=0,
        auto="500, where the process has not changed Python's default (5,000)",
    )
    pinned_buffers: int = _setting(
        "GLINT_PINNED_BUFFERS",
        "integer",
        0,
        "pinned host buffers of 16 MiB per GPU for the copies to it (0: 48 on a host of 32 GiB or more, else 16)",
        PROCESS,
        unit="buffers",
        lo=0,
    )
    io_forwarding: str = _setting(
        "GLINT_IO_FORWARDING",
        "choice",
        "off",
        "on a host of several GPUs, scans copy their chunks to the query's GPU over the other GPUs' PCIe "
        "links too (host to GPU k, then over NVLink), using only those GPUs' copy engines: 'auto' where "
        "a copy over all of the links measured at least 1.2 times faster than over the GPU's own "
        "(measured once per process), 'on' wherever the GPUs can copy to each other, 'off' (the default) "
        "never; never in a distributed run",
        choices=("auto", "on", "off"),
    )
    scan_streams: int = _setting(
        "GLINT_SCAN_STREAMS",
        "integer",
        4,
        "CUDA streams per GPU shared by the scans: the copies run on the "
        "first, the columns decoded from their pages on the others",
        PROCESS,
        unit="streams",
        lo=1,
    )
    packed_exchange: bool = _setting(
        "GLINT_PACKED_EXCHANGE",
        "boolean",
        True,
        "a small exchange step between ranks (at most 4 MiB from every rank) moves all its column buffers as one "
        "buffer per destination, one collective (off: as a large step); ranks that disagree use the latter",
        FIXED,
    )
    skew_joins: str = _setting(
        "GLINT_SKEW_JOINS",
        "choice",
        "auto",
        "on several ranks, a join that shuffles both sides finds the hottest keys of one side at run time (an "
        "inner join's probe side, the preserved side of a left, right, semi, anti or scalar-subquery join); those "
        "rows stay on their rank and the other side's rows of those keys go to every rank: 'auto' where the join "
        "decides between broadcast and shuffle at run time, 'always' in every such join (the planner then no "
        "longer counts on its output being hashed on the keys), 'never'",
        FIXED,
        choices=("auto", "always", "never"),
    )
    grouped_exchange: bool = _setting(
        "GLINT_GROUPED_EXCHANGE",
        "boolean",
        True,
        "on NCCL a large exchange step sends each column buffer's part for each rank straight from where it "
        "lies and receives it into place, all in one group of point-to-point transfers (off: one all-to-all "
        "per column buffer)",
        FIXED,
    )
    fused_aggregation: bool = _setting(
        "GLINT_FUSED_AGGREGATION",
        "boolean",
        True,
        "COUNT, SUM and AVG of a chunk with at most 32 or 4,096 to 262,144 groups computed in one pass per "
        "eight (at most 32 groups) or four input columns by a Triton kernel on CUDA (off: one scatter per state)",
    )
    fused_filters: bool = _setting(
        "GLINT_FUSED_FILTERS",
        "boolean",
        True,
        "a filter's predicate (and a join's residual condition) of comparisons, IN lists, AND / OR / NOT and "
        "tests of one string column run as one generated Triton kernel on CUDA (off: one torch operation per "
        "expression node; TPC-H SF 100 on an H100 took 3.83 s off, 3.42 s on: docs/performance.md)",
    )
    fused_expressions: bool = _setting(
        "GLINT_FUSED_EXPRESSIONS",
        "boolean",
        True,
        "a projection's or an aggregate's argument of nested +, - and * over integers and DECIMALs of at most "
        "18 digits runs as one generated Triton kernel on CUDA, its overflow tests included; with "
        "fused_aggregation, the COUNT / SUM / AVG inputs of few groups are computed inside the summing kernel "
        "(off: one torch operation per expression node and test)",
    )
    triton_strings: bool = _setting(
        "GLINT_TRITON",
        "boolean",
        True,
        "glint's Triton kernels (strings, few-group sums, hash tables) run on CUDA (off: their torch code)",
        PROCESS,
    )
    hash_tables: bool = _setting(
        "GLINT_HASH_TABLES",
        "boolean",
        True,
        "joins and GROUP BY find keys through GPU hash tables on CUDA when the keys are not dense "
        "(off: sorted keys and binary search, as on the CPU)",
        PROCESS,
    )
    trace: str | None = _setting(
        "GLINT_TRACE",
        "text",
        None,
        "write a timeline of glint's threads (Chrome's trace format) to this file when the process exits",
        PROCESS,
        unit="path",
        auto="no timeline",
    )

    @classmethod
    def build(cls, arguments: Mapping | None = None, environ: Mapping | None = None) -> Settings:
        """The settings of a new connection: each from ``arguments`` (the
        keyword arguments of glint.connect; None: not given), else from
        its environment variable in ``environ`` (default: os.environ; an
        empty one is not set), else its default."""
        arguments = dict(arguments or {})
        environ = os.environ if environ is None else environ
        for name in arguments:
            setting(name)  # an unknown name: an error naming the close ones
        values = {}
        for s in _ALL.values():
            given = arguments.get(s.name)
            if given is not None:
                values[s.name] = s.parse(given, s.name)
                continue
            raw = environ.get(s.env, "")
            if raw.strip():
                values[s.name] = s.parse(raw, s.env)
        return cls(**values)

    def with_value(self, name: str, value) -> Settings:
        """A copy with setting ``name`` (any case) set to ``value``, checked
        (SET name = value)."""
        s = setting(name)
        if value is None:
            raise GlintError(f"{s.name} needs a value (RESET {s.name} restores the connection's own)")
        return replace(self, **{s.name: s.parse(value, s.name)})

    def value(self, name: str):
        return getattr(self, setting(name).name)


_ALL: dict[str, Setting] = {}
for _f in fields(Settings):
    _s = _f.metadata["setting"]
    object.__setattr__(_s, "name", _f.name)  # (the field's name is the setting's: set once, here)
    _ALL[_f.name] = _s
del _f, _s


def all_settings() -> list[Setting]:
    """Every setting, in the order of the reference."""
    return list(_ALL.values())


def setting(name: str) -> Setting:
    """The setting called ``name`` (any case); an unknown name is a
    GlintError naming the close ones.

    >>> setting("Memory_Limit").env
    'GLINT_MEMORY_LIMIT'
    >>> setting("memory_limt")
    Traceback (most recent call last):
    ...
    glint.errors.GlintError: unrecognized configuration parameter "memory_limt" (did you mean "memory_limit"?)
    """
    s = _ALL.get(str(name).lower())
    if s is None:
        close = difflib.get_close_matches(str(name).lower(), list(_ALL), n=3, cutoff=0.6)
        names = ", ".join(f'"{c}"' for c in close)
        hint = f" (did you mean {names}?)" if close else " (glint_settings() lists them)"
        raise GlintError(f'unrecognized configuration parameter "{name}"{hint}')
    return s


_process_applied = False
_process_lock = threading.Lock()
_switch_set = False
# Python's own switch interval, and glint's when the process has not changed it (see gil_switch_interval)
PYTHON_SWITCH_INTERVAL_S = 0.005
SWITCH_INTERVAL_US = 500


def switch_interval_s(settings: Settings, current: float) -> float | None:
    """The interpreter's switch interval the gil_switch_interval setting
    asks for, given the ``current`` one (seconds), or None: leave it.
    Measured on one H200 (TPC-H SF 30, 16 GB limit, six queries,
    interleaved): 0.5 ms against Python's 5 ms took the warm runs from 0.266
    to 0.237 s and the runs fed from the host tier from 1.082 to 1.021 s;
    0.1 ms was no better than 0.5 ms.

    >>> switch_interval_s(Settings(), 0.005), switch_interval_s(Settings(), 0.001)
    (0.0005, None)
    >>> switch_interval_s(Settings(gil_switch_interval=250), 0.001), switch_interval_s(Settings(gil_switch_interval=0), 0.005)
    (0.00025, None)
    """
    us = settings.gil_switch_interval
    if us is None:
        if abs(current - PYTHON_SWITCH_INTERVAL_S) > 1e-9:
            return None  # the process chose its own
        us = SWITCH_INTERVAL_US
    return us / 1e6 if us > 0 else None


def apply_switch_interval(settings: Settings) -> None:
    """The gil_switch_interval setting (switch_interval_s), applied by the
    first CUDA connection of the process."""
    global _switch_set
    with _process_lock:
        if _switch_set:
            return
        _switch_set = True
    import sys

    s = switch_interval_s(settings, sys.getswitchinterval())
    if s is not None:
        sys.setswitchinterval(s)


def apply_process_settings(settings: Settings) -> None:
    """The process-wide settings that no pool or buffer carries (the string
    kernels' Triton switch, the trace), applied by the first connection of
    the process; later connections' values are ignored (as the pools'
    sizes are, once the pools exist)."""
    global _process_applied
    with _process_lock:
        if _process_applied:
            return
        _process_applied = True
    enable_triton(settings.triton_strings)
    enable_hash_tables(settings.hash_tables)
    if settings.trace:
        _trace.write_at_exit(settings.trace)


# GLINT_* variables that are not settings: read where they are used (the
# command line, the benchmarks, the test data), listed in the reference
ENVIRONMENT_ONLY = (
    (
        "GLINT_DEBUG",
        "the glint command, the benchmarks, a distributed connection's errors",
        "set: an internal error shows its traceback (a rank's, on rank 0's error)",
    ),
    ("GLINT_HISTORY", "glint shell", "the shell's history file (default ~/.glint_history)"),
    (
        "GLINT_DATA",
        "glint tpch, glint bench, the tests",
        "where TPC-H and SSB data are generated and cached (default $XDG_CACHE_HOME/glint or ~/.cache/glint)",
    ),
    ("GLINT_RANKS", "the glint command", "the default of --ranks (a number, or env: the ranks torchrun started)"),
    ("GLINT_BENCH_LOG", "glint bench", "set (not 0): the harness logs each run's progress"),
    (
        "GLINT_PROGRESS_INTERVAL",
        "glint tpch, glint bench",
        "seconds between the lines that report a data generation's progress when stderr is not a terminal "
        "(default 5; on a terminal a progress bar)",
    ),
)


def reference_markdown() -> str:
    """The settings reference (docs/settings.md): a table of every setting
    and of the environment variables that are not settings."""
    out = [
        "# Settings",
        "",
        "Every setting of a connection, generated from `glint/runtime/settings.py` (`reference_markdown()`).",
        "A connection's settings come from `glint.connect()`'s keyword arguments, then the environment",
        "variables, then the defaults. On an open connection `SET name = value` (or `SET name TO value`)",
        "changes a setting of scope `connection`, from the next query on; `RESET name` and `RESET ALL` give",
        "back the values the connection was opened with; `SELECT current_setting('name')` reads one and",
        "`SELECT * FROM glint_settings()` lists them all (name, value, description, input_type, scope).",
        "Names are case-insensitive; sizes take a number of bytes or a text such as '16GB' or '512 MiB'",
        "(binary units).",
        "",
        "Scopes: " + "; ".join(f"`{k}`: {v}" for k, v in _SCOPE_TEXT.items()) + ".",
        "",
        "| name | environment variable | type | default | scope | description |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for s in _ALL.values():
        kind = s.kind if s.kind != "choice" else "one of " + ", ".join(s.choices)
        if s.kind == "integer" and (s.lo is not None or s.hi is not None):
            kind += f" ({s.lo} to {s.hi})" if s.hi is not None else f" (at least {s.lo})"
        if s.unit:
            kind += f", {s.unit}"
        default = s.auto if s.default is None else s.text(s.default)
        if s.kind == "integer" and s.unit == "bytes" and s.default:
            default += f" ({format_bytes(s.default)})"
        out.append(f"| `{s.name}` | `{s.env}` | {kind} | {default} | {s.scope} | {s.description} |")
    out += [
        "",
        "## Environment variables that are not settings",
        "",
        "| variable | read by | meaning |",
        "| --- | --- | --- |",
    ]
    out += [f"| `{env}` | {where} | {meaning} |" for env, where, meaning in ENVIRONMENT_ONLY]
    return "\n".join(out) + "\n"
