"""A sampling profiler over all threads (cProfile sees only the main thread,
and the scan's work runs on decoding threads): every `interval` seconds the
stack of each thread is taken; report() lists, per thread kind, the frames
where samples landed (innermost glint frame and the innermost frame)."""
import collections
import sys
import threading
import time


class Sampler:
    def __init__(self, interval: float = 0.002):
        self.interval = interval
        self.counts = collections.Counter()
        self.per_thread = collections.Counter()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()

    def _run(self):
        me = threading.get_ident()
        names = {}
        while not self._stop.is_set():
            for t in threading.enumerate():
                names[t.ident] = t.name.split("_")[0].rstrip("0123456789-")
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                kind = names.get(ident, "?")
                inner = f"{frame.f_code.co_filename.split('/')[-1]}:{frame.f_lineno}({frame.f_code.co_name})"
                g, f = None, frame
                while f is not None:
                    if "/glint/" in f.f_code.co_filename:
                        g = f"{f.f_code.co_filename.split('/glint/')[-1]}:{f.f_lineno}({f.f_code.co_name})"
                        break
                    f = f.f_back
                self.counts[(kind, g, inner)] += 1
                self.per_thread[kind] += 1
            time.sleep(self.interval)

    def report(self, top: int = 40) -> str:
        lines = [f"samples per thread kind: {dict(self.per_thread)}"]
        for (kind, g, inner), n in self.counts.most_common(top):
            lines.append(f"{n:6d} {kind:22s} {g}  <- {inner}")
        return "\n".join(lines)
