"""Live tensor bytes against the memory manager's accounting, on the CPU.

usage: python bench/memdiag.py SF LIMIT CHUNK_ROWS [QUERY [EVERY]] [nofloor]

Runs one TPC-H query under a memory limit and, every EVERY reservation
request, counts the bytes of every live CPU tensor that is not a loaded
table's (gc), against the reservations and the table cache. Prints the worst
gap seen, the largest tensors outside device-tier held batches with the
chain of objects that keep them, and the stack at that moment. A scaled-down
stand-in for a GPU memory trace: Q21 at SF 0.1 under 16 MB behaves like SF 100
under 16 GB. "nofloor" drops the direct-addressed join build's 4M-key floor,
whose tables are sized by the key range (64 MiB at most, not reserved), which
otherwise dominates at this scale.
"""
import gc, sys, time, collections, traceback
import torch, glint
from glint.workloads import tpch
from glint.runtime import memory as M

sf = float(sys.argv[1]); lim = sys.argv[2]; chunk = int(sys.argv[3]); qn = int(sys.argv[4]) if len(sys.argv) > 4 else 21
con = glint.connect(memory_limit=lim, chunk_rows=chunk)
tpch.load_tpch(con, sf, progress=False)
# touch every table once so its columns are loaded: the baseline
for t in ("lineitem", "orders", "supplier", "nation"):
    con.sql(f"SELECT count(*) FROM {t}").arrow()

def storages():
    out = {}
    for o in gc.get_objects():
        if isinstance(o, torch.Tensor) and o.device.type == "cpu":
            try:
                s = o.untyped_storage()
            except Exception:
                continue
            out.setdefault(s.data_ptr(), (s.nbytes(), o))
    return out

gc.collect()
base = set(storages())
mm = con.memory
worst = [0, None, None]
calls = [0]
orig = M.MemoryManager._grow

def grow(self, n):
    r = orig(self, n)
    calls[0] += 1
    if calls[0] % int(sys.argv[5] if len(sys.argv) > 5 else 20) == 0:
        st = storages()
        extra = {k: v for k, v in st.items() if k not in base}
        live = sum(v[0] for v in extra.values())
        unacc = live - self._reserved - self._cache_bytes
        if unacc > worst[0]:
            from glint.runtime.spill import HeldBatch
            hb0 = set()
            for o in gc.get_objects():
                if isinstance(o, HeldBatch) and o.tier == "device" and o._batch is not None:
                    for c in o._batch.columns.values():
                        for t2 in (c.data, c.valid):
                            if isinstance(t2, torch.Tensor):
                                hb0.add(t2.untyped_storage().data_ptr())
            big = sorted((v for k, v in extra.items() if k not in hb0), key=lambda v: -v[0])[:8]
            desc = []
            import types as _types
            for nb, t in big:
                chain, o, seen = [], t, {id(extra), id(st)} | {id(v) for v in st.values()}
                for _ in range(7):
                    rs = [r for r in gc.get_referrers(o) if id(r) not in seen and not (isinstance(r, list) and len(r) > 10000) and not isinstance(r, (_types.FrameType,)) and r is not big and r is not extra and r is not st]
                    fr = [r for r in gc.get_referrers(o) if isinstance(r, _types.FrameType)]
                    names = [type(r).__name__ for r in rs][:4]
                    if fr: names += ["frame:" + f.f_code.co_name + ":" + str(f.f_lineno) for f in fr[:3]]
                    chain.append(names)
                    if not rs: break
                    seen.add(id(o)); o = rs[0]
                    if isinstance(o, _types.GeneratorType):
                        chain.append(["gen:" + o.gi_code.co_name + ":" + str(o.gi_frame.f_lineno if o.gi_frame else -1)]); break
                desc.append((nb, tuple(t.shape), str(t.dtype), chain))
            from glint.runtime.spill import HeldBatch
            hb = set()
            for o in gc.get_objects():
                if isinstance(o, HeldBatch) and o.tier == "device" and o._batch is not None:
                    for c in o._batch.columns.values():
                        for t2 in (c.data, c.valid):
                            if isinstance(t2, torch.Tensor):
                                hb.add(t2.untyped_storage().data_ptr())
            held_bytes = sum(extra[k][0] for k in hb if k in extra)
            desc.append(("held by device HeldBatches", held_bytes, "other", live - held_bytes))
            stack = "".join(traceback.format_stack(limit=14)[:-1])
            worst[:] = [unacc, (live, self._reserved, self._cache_bytes), (desc, stack)]
    return r

M.MemoryManager._grow = grow
import glint.kernels.join as KJ, glint.exec.hash_join as HJ
def build_side(key, valid):
    rows = torch.arange(key.shape[0], device=key.device)
    if valid is not None:
        rows = rows[valid]; key = key[valid]
    if key.shape[0] == 0:
        return KJ.SortedBuild(key, None)
    lo, hi = torch.stack([key.min(), key.max()]).tolist()
    span = hi - lo + 1
    if span <= 4 * key.shape[0] and span <= KJ.DIRECT_LIMIT:
        return KJ.DirectBuild(key, rows, lo, span)
    b = KJ.SortedBuild(key, None); b.rows = rows[b.rows]; return b
if "nofloor" in sys.argv:
    KJ.build_side = HJ.build_side = build_side
t = time.time()
r = con.sql(tpch.tpch_query(qn))
try:
    out = r.arrow()
    print("rows", out.num_rows)
except Exception as e:
    print("ERR", type(e).__name__, str(e)[:300])
print("time", round(time.time() - t, 1), "grow calls", calls[0], "peak declared", mm.peak)
print("worst unaccounted", worst[0], "live/reserved/cache", worst[1])
if worst[2]:
    for d in worst[2][0]:
        print("  ", d)
    print(worst[2][1])
