"""A performance model of TPC-H-like queries on N GPUs, in the style of the
cost equations of "Terabyte-scale analytics in the blink of an eye": a
query's time on N ranks is its compute, split into a part that divides by the
ranks and one that does not, plus its exchange steps, each a fixed cost and
its bytes over the link.

Fitted from two ``glint bench`` reports of the same data on one host: one
GPU (each query's warm time ``t1``) and k ranks (``rank_stats``: each rank's
compute seconds and exchange steps with their bytes and seconds):

- **Compute.** ``t1 = F + V`` and ``compute_k = F + V / k`` give F, the part
  every rank repeats whatever its share (kernel launches, host
  synchronisations, planning-free host work per query), and V, the part that
  divides; F is kept within [0, t1].
- **Exchange steps.** One line through every step of every query at k ranks:
  ``seconds = latency + bytes / bandwidth`` (least squares), the bytes being
  the most any rank received in the step. At N ranks a step's bytes follow
  its kind: a shuffle moves ``(N - 1) / N`` of each rank's ``1 / N`` share of
  its data, a broadcast brings ``(N - 1) / N`` of its data to every rank, a
  gather brings ``(N - 1) / N`` of it to one; the data of a step is what the
  k-rank run shows, scaled back.
- **Several hosts.** Of a rank's exchanged bytes, the share bound for other
  hosts, ``(N - G) / (N - 1)`` for G GPUs a host, crosses the inter-host link,
  whose bandwidth per GPU is an input (``--host-link-gbps``, default 50 GB/s:
  one 400 Gb/s NIC per GPU, as in DGX H100-class nodes); both shares are
  added, not overlapped, so the projection leans slow.

``T(N) = F + V / N + sum over steps of (latency + bytes(N) / bandwidth)``.
A third report (``--check``, another rank count of the same host) compares
prediction and measurement per query.

>>> f = fit_compute(1.0, 0.4, 4)  # t1 1 s, compute 0.4 s a rank on 4 ranks
>>> round(f[0], 3), round(f[1], 3)
(0.2, 0.8)
>>> round(step_bytes("shuffle", 300.0, 4, 8), 1)   # 300 bytes a rank of 4: 1600 in all, 8 ranks
175.0
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from glint.errors import GlintError

DEFAULT_HOST_LINK_GBPS = 50.0  # GB/s per GPU between hosts: one 400 Gb/s NIC per GPU


def fit_compute(t1: float, compute_k: float, k: int) -> tuple[float, float]:
    """(F, V) with ``t1 = F + V`` and ``compute_k = F + V / k``; F within [0, t1]."""
    if k <= 1:
        return 0.0, t1
    fixed = (k * compute_k - t1) / (k - 1)
    fixed = min(max(fixed, 0.0), t1)
    return fixed, t1 - fixed


def step_bytes(kind: str, received_k: float, k: int, n: int) -> float:
    """The bytes the busiest rank receives in one step at ``n`` ranks, from
    what it received at ``k`` ranks."""
    if n <= 1 or k <= 1:
        return 0.0
    if kind == "shuffle":  # a share of data/k per rank, (k-1)/k of it to others
        data = received_k * k * k / (k - 1)
        return data / n * (n - 1) / n
    if kind in ("broadcast", "gather"):  # (k-1)/k of the data reaches a rank (or the one)
        data = received_k * k / (k - 1)
        return data * (n - 1) / n
    return received_k  # all-reduce, decisions: small and fixed


@dataclass
class Link:
    latency_s: float
    gbps: float  # effective GB/s a rank receives at


def fit_link(steps: list[tuple[float, float]]) -> Link:
    """seconds = latency + bytes / bandwidth through (bytes, seconds) pairs (least squares)."""
    pts = [(b, s) for b, s in steps if s > 0]
    if len(pts) < 2:
        return Link(pts[0][1] if pts else 0.0, float("inf"))
    n = len(pts)
    mb = sum(b for b, _ in pts) / n
    ms = sum(s for _, s in pts) / n
    var = sum((b - mb) ** 2 for b, _ in pts)
    slope = sum((b - mb) * (s - ms) for b, s in pts) / var if var else 0.0
    slope = max(slope, 1e-15)
    return Link(max(ms - slope * mb, 0.0), 1 / slope / 1e9)


def _steps(query: dict) -> list[dict]:
    """The exchange steps of a query at k ranks, with the most bytes any rank received."""
    ranks = query.get("rank_stats") or []
    if not ranks:
        return []
    by_step: dict = {}
    for r in ranks:
        for e in r.get("exchanges", []):
            s = by_step.setdefault(e["step"], {"kind": e["kind"], "bytes": 0, "seconds": 0.0})
            s["bytes"] = max(s["bytes"], e.get("bytes_received", 0))
            s["seconds"] = max(s["seconds"], e.get("seconds", 0.0))
    return [by_step[k] for k in sorted(by_step)]


def _mean_compute(query: dict) -> float:
    ranks = query.get("rank_stats") or []
    return sum(r["compute_s"] for r in ranks) / len(ranks) if ranks else 0.0


def model(one: dict, many: dict, host_link_gbps: float = DEFAULT_HOST_LINK_GBPS):
    """A per-query model from a one-GPU report and a k-rank report; returns
    (link, {label: (F, V, steps)}) and a predictor ``predict(label, n, gpus_per_host)``."""
    k = many["ranks"]
    link = fit_link([(s["bytes"], s["seconds"]) for q in many["queries"] for s in _steps(q)])
    per = {}
    t1s = {q["label"]: q["glint_warm_s"] for q in one["queries"] if q.get("glint_warm_s")}
    for q in many["queries"]:
        if q["label"] not in t1s or not q.get("rank_stats"):
            continue
        fixed, var = fit_compute(t1s[q["label"]], _mean_compute(q), k)
        per[q["label"]] = (fixed, var, _steps(q))

    def predict(label: str, n: int, gpus_per_host: int | None = None) -> float:
        fixed, var, steps = per[label]
        t = fixed + var / n
        g = gpus_per_host or n
        for s in steps:
            b = step_bytes(s["kind"], s["bytes"], k, n)
            if n <= 1:
                continue
            remote = b * max(n - g, 0) / (n - 1)
            t += link.latency_s + (b - remote) / (link.gbps * 1e9) + remote / (host_link_gbps * 1e9)
        return t

    return link, per, predict


def report(
    one_path: str, many_path: str, check_paths=(), project=(8,), hosts: int = 2, host_link_gbps=DEFAULT_HOST_LINK_GBPS
) -> str:
    """The model's markdown report: fitted link, per query F, V, predictions
    for the checked rank counts (with their errors) and the projections."""
    one, many = _load(one_path, "the one-GPU report"), _load(many_path, "the k-rank report")
    checks = [_load(p, "a --check report") for p in check_paths]
    if one.get("ranks", 1) != 1:
        raise GlintError(f"{one_path}: the one-GPU report ran on {one['ranks']} ranks; give a report of one GPU first")
    for path, r in [(many_path, many)] + list(zip(check_paths, checks)):
        if (r.get("benchmark"), r.get("sf")) != (one.get("benchmark"), one.get("sf")):
            raise GlintError(
                f"{path}: {r.get('benchmark')} SF {r.get('sf')} is not the one-GPU report's "
                f"{one.get('benchmark')} SF {one.get('sf')}"
            )
    if many.get("ranks", 1) < 2 or not any(q.get("rank_stats") for q in many["queries"]):
        raise GlintError(
            f"{many_path}: the model is fitted on a run of 2 or more ranks with rank_stats "
            f"(glint bench ... --ranks N); this report ran on {many.get('ranks', 1)}"
        )
    link, per, predict = model(one, many, host_link_gbps)
    k = many["ranks"]
    g = max(project) if project else 8
    lines = [
        f"Fitted on 1 GPU and {k} ranks: exchange step latency {link.latency_s * 1e3:.2f} ms, "
        f"effective bandwidth {link.gbps:.1f} GB/s a rank; inter-host link {host_link_gbps:.0f} GB/s a GPU (assumed).",
        "",
    ]
    head = ["query", "1 GPU", f"{k} ranks", "F (fixed)", "V (divides)"]
    for c in checks:
        head += [f"{c['ranks']} measured", f"{c['ranks']} predicted", "error"]
    head += [f"{n} GPUs" for n in project] + [f"{hosts}x{g} GPUs"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    measured_k = {q["label"]: q["glint_warm_s"] for q in many["queries"]}
    errors = {c["ranks"]: [] for c in checks}
    sums: dict[int, float] = {}

    def cell(i: int, seconds: float) -> str:
        sums[i] = sums.get(i, 0.0) + seconds
        return f"{seconds * 1e3:.1f}"

    for label, (fixed, var, _) in per.items():
        cells = [cell(0, fixed + var), cell(1, measured_k[label]), cell(2, fixed), cell(3, var)]
        for j, c in enumerate(checks):
            m = next(q["glint_warm_s"] for q in c["queries"] if q["label"] == label)
            p = predict(label, c["ranks"])
            errors[c["ranks"]].append(abs(p - m) / m)
            cells += [cell(4 + 3 * j, m), cell(5 + 3 * j, p), f"{100 * (p - m) / m:+.0f}%"]
        at = 4 + 3 * len(checks)
        cells += [cell(at + j, predict(label, n)) for j, n in enumerate(project)]
        cells.append(cell(at + len(project), predict(label, hosts * g, g)))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    total = [f"{sums[i]:.3f} s" if i in sums else "" for i in range(len(head) - 1)]
    lines.append("| total | " + " | ".join(total) + " |")
    for r, errs in errors.items():
        within = sum(e <= 0.25 for e in errs)
        median = sorted(errs)[len(errs) // 2] * 100 if errs else 0.0
        lines += ["", f"{r} ranks: {within} of {len(errs)} queries predicted within 25% (median error {median:.0f}%)."]
    return "\n".join(lines)


def _load(path: str, what: str) -> dict:
    """A glint bench JSON report, or a GlintError naming the file and what is wrong."""
    try:
        with open(path) as f:
            r = json.load(f)
    except OSError as e:
        raise GlintError(f"{what} {path}: cannot be read ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise GlintError(f"{what} {path}: not JSON (line {e.lineno}, column {e.colno})") from None
    if not isinstance(r, dict) or not isinstance(r.get("queries"), list):
        raise GlintError(f"{what} {path}: not a glint bench report (no queries)")
    return r


def cmd_model(args) -> int:
    print(report(args.one, args.many, args.check or (), args.project, args.hosts, args.host_link_gbps))
    return 0


def add_arguments(p) -> None:
    p.add_argument("one", help="glint bench JSON report of one GPU")
    p.add_argument("many", help="glint bench JSON report of k ranks, same data and host (with rank_stats)")
    p.add_argument("--check", action="append", help="a report of another rank count to compare predictions with")
    p.add_argument(
        "--project",
        type=lambda text: [int(x) for x in text.split(",")],
        default=[8],
        help="rank counts of one host to project to, comma-separated (default 8)",
    )
    p.add_argument(
        "--hosts", type=int, default=2, help="hosts of the largest --project count, for the multi-host projection"
    )
    p.add_argument(
        "--host-link-gbps",
        type=float,
        default=DEFAULT_HOST_LINK_GBPS,
        help="inter-host bandwidth a GPU, GB/s (assumed)",
    )
