# usage (on the device): bash bench/device/session13c.sh -- cold Q6 and Q1 traced at SF 100 (H200), and the
# five SF 100 queries with the file reads' gap 64 KiB (before) and 1 MiB
source bench/device/setup.sh
tpch_data 100
python3 bench/device/tracecold.py 100 6,1 > $OUT/tracecold.log 2>&1; tail -3 $OUT/tracecold.log
for f in $OUT/*.json; do python3 bench/device/traceview.py $f > ${f%.json}.txt 2>&1; head -16 ${f%.json}.txt; done
for g in 65536 1048576 65536 1048576; do cold_sf100 cold100.log GLINT_READ_GAP=$g; done
