# usage (on the device): bash bench/device/session13h.sh -- scans' tasks by priority (GLINT_SCAN_PRIORITY) against
# first come first served, interleaved on one host: SF 100's five queries and SF 10's 22, cold; then Q9 traced
source bench/device/setup.sh
tpch_data 100 10
sync; echo "synced after $(( $(date +%s) - t0 )) s"
for v in 0 1 0 1; do cold_sf100 cold100.log GLINT_SCAN_PRIORITY=$v; done
for v in 0 1 0 1; do cold_sf10 cold10.log GLINT_SCAN_PRIORITY=$v; done
python3 bench/device/tracecold.py 100 9 > $OUT/tracecold.log 2>&1; grep "===" $OUT/tracecold.log | cut -c1-60
for f in $OUT/*.json; do python3 bench/device/traceview.py $f > ${f%.json}.txt 2>&1; done
