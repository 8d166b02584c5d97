# usage (on the device): bash bench/device/session11d.sh -- 5 cold SF 100 queries with the scan's streams:
# pyarrow against the raw path, alternating; traces of Q1 and Q9 cold with the raw path
source bench/device/setup.sh
tpch_data 100
run100() { cold_sf100 coldpass100_streams.log "$@"; }
run100 GLINT_PARQUET_DECODE=device; run100 GLINT_PARQUET_DECODE=; run100 GLINT_PARQUET_DECODE=device
run100 GLINT_PARQUET_DECODE=
GLINT_PARQUET_DECODE=device python3 bench/device/tracecold.py 100 1,9 > $OUT/trace100.txt 2>&1
grep -A20 "=== Q" $OUT/trace100.txt | grep -v "^ *[0-9.]* +" | head -50
