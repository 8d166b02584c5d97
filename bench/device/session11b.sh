# usage (on the device): bash bench/device/session11b.sh -- the split decoder's parts (splitbench.py, SF 10),
# then 5 cold SF 100 queries, pyarrow against the raw path (no host dictionaries), alternating, and a trace
# of Q1 and Q9 cold at SF 100 with the raw path
source bench/device/setup.sh
tpch_data 10
python3 bench/device/splitbench.py 10 2>&1 | tee $OUT/splitbench.log
tpch_data 100
run100() { cold_sf100 coldpass100_split.log "$@"; }
run100 GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0; run100 GLINT_PARQUET_DECODE=
run100 GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0
GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0 python3 bench/device/tracecold.py 100 1,9 > $OUT/trace100.txt 2>&1
grep -A25 "=== Q" $OUT/trace100.txt | head -80
