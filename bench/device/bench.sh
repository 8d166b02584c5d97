# usage: bash bench/device/bench.sh NAME BENCH-ARGS...   (on the device; results under $OUT/NAME)
# Runs `glint bench` with a log line per step (GLINT_BENCH_LOG) so that a run
# cut off by the call's time limit still shows how far it got.
source bench/device/setup.sh
name=$1; shift
mkdir -p "$OUT/$name"
echo "== $name: glint bench $* ($(date -u +%T))"
GLINT_BENCH_LOG=1 python3 -m glint.cli bench "$@" --out "$OUT/$name" > "$OUT/$name/run.log" 2>&1
rc=$?
tail -45 "$OUT/$name/run.log" | cut -c1-200
echo "== $name: rc=$rc ($(date -u +%T))"
