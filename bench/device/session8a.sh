# usage (on the device): bash bench/device/session8a.sh -- where cold time goes at SF 10:
# scan rate against pyarrow, 22 cold queries twice, allocator knobs, samples of slow queries
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(10, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; free -g | head -2
python3 bench/device/scanrate.py 10 2>&1 | tee $OUT/scanrate.log
MIMALLOC_PURGE_DELAY=-1 MIMALLOC_RESET_DELAY=100000 MIMALLOC_ALLOW_LARGE_OS_PAGES=1 python3 bench/device/scanrate.py 10 2>&1 | tail -3 | tee -a $OUT/scanrate.log
ARROW_DEFAULT_MEMORY_POOL=jemalloc python3 bench/device/scanrate.py 10 2>&1 | tail -6 | tee -a $OUT/scanrate.log
all=$(seq -s, 1 22)
python3 bench/device/coldpass.py 10 $all 2 2>&1 | tee $OUT/coldpass.log
MIMALLOC_PURGE_DELAY=-1 MIMALLOC_RESET_DELAY=100000 MIMALLOC_ALLOW_LARGE_OS_PAGES=1 python3 bench/device/coldpass.py 10 $all 1 2>&1 | head -1 | tee -a $OUT/coldpass.log
python3 bench/device/coldprof.py tpch 10 2,10,14 cuda > $OUT/prof.txt 2>&1
grep "===" $OUT/prof.txt
