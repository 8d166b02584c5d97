# usage (on the device): bash bench/device/session8b.sh -- allocator knobs over 22 cold queries at SF 10,
# and traces of slow cold queries
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(10, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"
all=$(seq -s, 1 22)
run() { env "$@" python3 bench/device/coldpass.py 10 $all 1 2>&1 | tee -a $OUT/coldpass.log | head -1; }
run X=default
run MIMALLOC_PURGE_DELAY=-1
run MIMALLOC_ALLOW_LARGE_OS_PAGES=1
run MIMALLOC_PURGE_DELAY=-1 MIMALLOC_ALLOW_LARGE_OS_PAGES=1
run ARROW_DEFAULT_MEMORY_POOL=jemalloc
run X=default
python3 bench/device/tracecold.py 10 1,10,14,2 > $OUT/trace_default.txt 2>&1
mkdir -p $OUT/knobs && OUT=$OUT/knobs MIMALLOC_PURGE_DELAY=-1 MIMALLOC_ALLOW_LARGE_OS_PAGES=1 python3 bench/device/tracecold.py 10 1,10,14,2 > $OUT/trace_knobs.txt 2>&1
grep "===" $OUT/trace_default.txt $OUT/trace_knobs.txt
gzip $OUT/*.json $OUT/knobs/*.json
