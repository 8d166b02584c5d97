# usage (on the device): bash bench/device/session9d.sh -- integer columns copied up narrowed (GLINT_NARROW_UPLOADS):
# CUDA tests, the scan rate and cold queries both ways (alternating fresh processes), then the SF 10 report
source bench/device/setup.sh
tpch_data 100 10
python3 -m pytest -q -p no:cacheprovider -x tests/test_scan_io.py 2>&1 | grep -E "^E |passed|failed" | head -20
for n in 1 0; do echo "== narrow $n"; GLINT_NARROW_UPLOADS=$n python3 bench/device/scanrate.py 100 2>&1 | tail -2; done
run() { env "$@" python3 bench/device/coldpass.py $SF $QS 1 2>&1 | tee -a $OUT/coldpass_sf$SF.log | head -1; }
SF=100 QS=1,6,3,9,18
run GLINT_NARROW_UPLOADS=1; run GLINT_NARROW_UPLOADS=0; run GLINT_NARROW_UPLOADS=1; run GLINT_NARROW_UPLOADS=0
SF=10 QS=$(seq -s, 1 22)
run GLINT_NARROW_UPLOADS=1; run GLINT_NARROW_UPLOADS=0; run GLINT_NARROW_UPLOADS=1; run GLINT_NARROW_UPLOADS=0
left=$(( 590 - ($(date +%s) - t0) ))
timeout -s INT $left bash bench/device/bench.sh tpch_sf10 tpch --sf 10 --device cuda --runs 3 --warmup 1 --duckdb-runs 1 2>&1 | tail -30
