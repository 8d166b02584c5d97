"""What ``glint bench`` records per query and the report it writes (the JSON
document; glint.bench.report prints and renders it), and the merge of the
reports of one benchmark run in parts (``glint bench-merge``).

Columns touched: ``touched_bytes`` is the bytes of the column chunks the
query's scans read, as glint holds them in memory (IOStats.scanned_bytes:
decoded column data, after the Parquet decode; of the cold run when there is
one, else of the last warm run): each scanned column once per scan, not what
kernels re-read nor what joins and aggregates build. ``touched_gbps`` is
touched_bytes / glint_warm_s / 1e9, the rate at which a warm run went through
its input; ``touched_bw_fraction`` that rate over the device's peak memory
bandwidth (machine.gpu_memory_bandwidth_gbps; null on the CPU or when it is
unknown). With ``--profile``, the fields of glint.bench.profile (null
without it).
"""

from __future__ import annotations

import datetime as _dt
import statistics
from dataclasses import dataclass, field

from glint.bench.profile import PROFILE_FIELDS
from glint.distributed.stats import summary as rank_summary
from glint.errors import GlintError

SCHEMA_VERSION = 1


@dataclass
class QueryRecord:
    name: str
    label: str
    rows: int | None = None
    glint_first_s: float | None = None
    plan_s: float | None = None  # the first run's parsing, binding, optimizing and physical planning
    warm_plan_reused: bool | None = None  # the timed warm runs reused the first run's plan (plan cache)
    glint_warm_runs_s: list[float] = field(default_factory=list)
    glint_cold_s: float | None = None
    glint_cold_load_s: float | None = None
    duckdb_memory_runs_s: list[float] = field(default_factory=list)
    duckdb_parquet_runs_s: list[float] = field(default_factory=list)
    peak_gpu_bytes: int | None = None
    gpu_baseline_bytes: int | None = None
    cold_peak_gpu_bytes: int | None = None
    warm_io: dict | None = None  # data movement of the last warm run (ExecContext.io)
    cold_io: dict | None = None  # ... of the cold run
    rank_stats: list | None = None  # a distributed run: per rank breakdown of the last warm run
    profile: dict | None = None  # --profile: the fields of glint.bench.profile.PROFILE_FIELDS
    tables: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # what was compared with DuckDB: "warm", "cold"
    errors: list[str] = field(default_factory=list)  # glint errors (warm / cold)
    duckdb_errors: list[str] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)

    @staticmethod
    def _median(xs):
        return statistics.median(xs) if xs else None

    @property
    def glint_warm_s(self):
        return self._median(self.glint_warm_runs_s)

    @property
    def duckdb_memory_s(self):
        return self._median(self.duckdb_memory_runs_s)

    @property
    def duckdb_parquet_s(self):
        return self._median(self.duckdb_parquet_runs_s)

    @property
    def speedup(self):
        w, d = self.glint_warm_s, self.duckdb_memory_s
        return d / w if w and d is not None else None

    @property
    def touched_bytes(self):
        return (self.cold_io or self.warm_io or {}).get("scanned_bytes")

    @property
    def touched_gbps(self):
        b, w = self.touched_bytes, self.glint_warm_s
        return b / w / 1e9 if b is not None and w else None

    def status(self, duckdb: bool) -> str:
        """ok | diff | error | unchecked (DuckDB off) | not checked (DuckDB failed)."""
        if self.errors:
            return "error"
        if self.diffs:
            return "diff"
        if not duckdb:
            return "unchecked"
        return "ok" if self.checked else "not checked"

    def correct(self, duckdb: bool):
        s = self.status(duckdb)
        return True if s == "ok" else (None if s == "unchecked" else False)

    def to_json(self, duckdb: bool, bandwidth_gbps: float | None = None, link_gbps: float | None = None) -> dict:
        """The query's entry in the report; ``bandwidth_gbps``: the device's
        peak memory bandwidth, ``link_gbps`` its host link's measured
        bandwidth, when known."""
        gbps = self.touched_gbps
        profile = self.profile or {}
        return {
            "query": self.name,
            "label": self.label,
            "correct": self.correct(duckdb),
            "status": self.status(duckdb),
            "rows": self.rows,
            "glint_warm_s": self.glint_warm_s,
            "glint_cold_s": self.glint_cold_s,
            "duckdb_memory_s": self.duckdb_memory_s,
            "duckdb_parquet_s": self.duckdb_parquet_s,
            "speedup": self.speedup,
            "peak_gpu_bytes": self.peak_gpu_bytes,
            "glint_first_s": self.glint_first_s,
            "plan_s": self.plan_s,
            "warm_plan_reused": self.warm_plan_reused,
            "glint_warm_min_s": min(self.glint_warm_runs_s) if self.glint_warm_runs_s else None,
            "glint_warm_runs_s": self.glint_warm_runs_s,
            "glint_cold_load_s": self.glint_cold_load_s,
            "duckdb_memory_runs_s": self.duckdb_memory_runs_s,
            "duckdb_parquet_runs_s": self.duckdb_parquet_runs_s,
            "gpu_baseline_bytes": self.gpu_baseline_bytes,
            "cold_peak_gpu_bytes": self.cold_peak_gpu_bytes,
            "warm_io": self.warm_io,
            "cold_io": self.cold_io,
            # the slowest rank's compute / shuffle / broadcast / gather / wait seconds, bytes and messages
            "breakdown": rank_summary(self.rank_stats) if self.rank_stats else None,
            "rank_stats": self.rank_stats,
            "touched_bytes": self.touched_bytes,
            "touched_gbps": gbps,
            "touched_bw_fraction": gbps / bandwidth_gbps if gbps is not None and bandwidth_gbps else None,
            "warm_h2d_bytes": (self.warm_io or {}).get("h2d_bytes"),
            "warm_bus": bus_split(self.warm_io, self.glint_warm_s, link_gbps),
            "cold_h2d_bytes": (self.cold_io or {}).get("h2d_bytes"),
            "tables": self.tables,
            "checked": self.checked,
            "errors": self.errors + self.duckdb_errors,
            "diffs": self.diffs,
            **{k: profile.get(k) for k in PROFILE_FIELDS},
        }


def bus_split(io: dict | None, seconds: float | None, link_gbps: float | None = None) -> dict | None:
    """A warm run's bytes over the host-to-device links by path: Parquet
    pages as stored read from their files, pages as stored from the host
    tier, and columns decoded on the host; of all of them, the bytes that
    went over other GPUs' links (glint.io.forwarding); the rate the run
    moved them at (over its whole time), and that rate over the device's
    own link's measured bandwidth.

    >>> bus_split({"h2d_bytes": 10e9, "pages_h2d_bytes": 6e9, "tier_bytes": 5e9, "forwarded_bytes": 7e9}, 1.0, 50.0)
    {'pages_from_files_bytes': 1000000000, 'pages_from_host_tier_bytes': 5000000000, 'decoded_bytes': 4000000000, 'forwarded_bytes': 7000000000, 'gbps': 10.0, 'link_fraction': 0.2}
    """
    if not io or "h2d_bytes" not in io:
        return None
    h2d, pages, tier = io["h2d_bytes"], io.get("pages_h2d_bytes", 0), io.get("tier_bytes", 0)
    gbps = round(h2d / seconds / 1e9, 2) if seconds else None
    return {
        "pages_from_files_bytes": int(max(0, pages - tier)),
        "pages_from_host_tier_bytes": int(tier),
        "decoded_bytes": int(max(0, h2d - pages)),
        "forwarded_bytes": int(io.get("forwarded_bytes", 0)),
        "gbps": gbps,
        "link_fraction": round(gbps / link_gbps, 3) if gbps is not None and link_gbps else None,
    }


def sf_value(sf: float):
    return int(sf) if float(sf).is_integer() else float(sf)


def sum_of(xs) -> float | None:
    """The sum of the values that are not None; None when there are none."""
    xs = [x for x in xs if x is not None]
    return sum(xs) if xs else None


@dataclass(frozen=True)
class RunFacts:
    """What a report says about the run besides its queries."""

    benchmark: str
    title: str
    sf: float
    sf_label: str
    device: str  # the device's name ("cpu", "NVIDIA H100 80GB HBM3", "2 ranks x ...")
    device_type: str
    ranks: int
    hash_partition: bool
    runs: int
    warmup: int
    duckdb_runs: int | None
    duckdb: bool
    cold: bool
    eager: bool
    glint_options: dict
    data_dir: str
    profile: bool = False
    # each timed glint run began with no table chunks on the device (the host
    # tier kept its pages): the scans copied every chunk up
    drop_device_cache: bool = False
    # settings the environment (GLINT_*) set away from their defaults: an
    # ablation's switch is on record with its numbers
    settings_changed: dict | None = None


def build_report(
    facts: RunFacts, records: list[QueryRecord], load: dict, duckdb_info: dict, machine: dict, glint_wall_s: float
) -> dict:
    """The report (the JSON document) of a run."""
    bandwidth = machine.get("gpu_memory_bandwidth_gbps") if facts.device_type == "cuda" else None
    link = machine.get("h2d_link_gbps") if facts.device_type == "cuda" else None
    queries = [r.to_json(facts.duckdb, bandwidth, link) for r in records]
    report = {
        "schema_version": SCHEMA_VERSION,
        "benchmark": facts.benchmark,
        "title": facts.title,
        "sf": sf_value(facts.sf),
        "sf_label": facts.sf_label,
        "device": facts.device,
        "device_type": facts.device_type,
        "ranks": facts.ranks,
        "hash_partition": facts.hash_partition,
        "glint_version": machine["glint_version"],
        "timestamp": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "runs": facts.runs,
        "warmup": facts.warmup,
        "duckdb_runs": facts.duckdb_runs if facts.duckdb else None,
        "statistic": "median",
        "duckdb": facts.duckdb,
        "cold": facts.cold,
        "glint_load": "eager" if facts.eager else "lazy",
        "glint_options": facts.glint_options,
        "settings_changed": facts.settings_changed or {},
        "profile": facts.profile,
        "drop_device_cache": facts.drop_device_cache,
        "data_dir": facts.data_dir,
        "queries": queries,
        "glint_warm_total_s": sum_of(q["glint_warm_s"] for q in queries),
        "glint_cold_total_s": sum_of(q["glint_cold_s"] for q in queries),
        "duckdb_memory_total_s": sum_of(q["duckdb_memory_s"] for q in queries),
        "duckdb_parquet_total_s": sum_of(q["duckdb_parquet_s"] for q in queries),
        "speedup_total": None,
        "queries_total": len(queries),
        "queries_correct": sum(q["correct"] is True for q in queries),
        "queries_failed": [q["label"] for q in queries if q["status"] not in ("ok", "unchecked")],
        "load_s": load,
        "glint_wall_s": glint_wall_s,
        "duckdb_info": duckdb_info,
        "machine": machine,
    }
    both = [q for q in queries if q["glint_warm_s"] and q["duckdb_memory_s"] is not None]
    if both:
        report["speedup_total"] = sum(q["duckdb_memory_s"] for q in both) / sum(q["glint_warm_s"] for q in both)
    return report


def merge_reports(reports: list[dict]) -> dict:
    """One report from several runs of the same benchmark, SF and device (a
    long benchmark split across calls): per query, each measurement is taken
    from the first report that has it; a query is correct when every report
    that checked it found it correct.

    >>> a = {"benchmark": "tpch", "sf": 1, "device": "x", "queries": [
    ...     {"query": "1", "label": "Q01", "correct": True, "status": "ok", "glint_warm_s": 1.0,
    ...      "duckdb_memory_s": 2.0, "duckdb_parquet_s": None, "glint_cold_s": None}]}
    >>> b = {"benchmark": "tpch", "sf": 1, "device": "x", "queries": [
    ...     {"query": "1", "label": "Q01", "correct": True, "status": "ok", "glint_warm_s": 1.1,
    ...      "duckdb_memory_s": None, "duckdb_parquet_s": 3.0, "glint_cold_s": 4.0}]}
    >>> m = merge_reports([a, b])
    >>> m["queries"][0]["glint_cold_s"], m["duckdb_parquet_total_s"], m["speedup_total"], m["queries_failed"]
    (4.0, 3.0, 2.0, [])
    """
    first = dict(reports[0])
    for r in reports[1:]:
        for key in ("benchmark", "sf", "device"):
            if r.get(key) != first.get(key):
                raise GlintError(f"cannot merge reports with different {key}: {first.get(key)} and {r.get(key)}")
    merged_q: dict[str, dict] = {}
    order: list[str] = []
    for r in reports:
        for q in r["queries"]:
            m = merged_q.get(q["query"])
            if m is None:
                merged_q[q["query"]] = dict(q)
                order.append(q["query"])
                continue
            for k, v in q.items():
                if m.get(k) is None and v is not None:
                    m[k] = v
            if q.get("correct") is False or m.get("correct") is False:
                m["correct"] = False
                m["status"] = q["status"] if q.get("correct") is False else m["status"]
                m.setdefault("errors", [])
                m["errors"] = list(m.get("errors") or []) + list(q.get("errors") or [])
                m["diffs"] = list(m.get("diffs") or []) + list(q.get("diffs") or [])
    queries = [merged_q[k] for k in order]
    first["queries"] = queries
    for key in ("glint_warm", "glint_cold", "duckdb_memory", "duckdb_parquet"):
        first[f"{key}_total_s"] = sum_of(q.get(f"{key}_s") for q in queries)
    for q in queries:
        if q.get("glint_warm_s") and q.get("duckdb_memory_s") is not None:
            q["speedup"] = q["duckdb_memory_s"] / q["glint_warm_s"]
    both = [q for q in queries if q.get("glint_warm_s") and q.get("duckdb_memory_s") is not None]
    first["speedup_total"] = (
        sum(q["duckdb_memory_s"] for q in both) / sum(q["glint_warm_s"] for q in both) if both else None
    )
    first["queries_total"] = len(queries)
    first["queries_correct"] = sum(q.get("correct") is True for q in queries)
    first["queries_failed"] = [q["label"] for q in queries if q.get("status") not in ("ok", "unchecked")]
    first["merged_from"] = [r.get("timestamp") for r in reports]
    return first
