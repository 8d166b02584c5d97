# usage (on the device): bash bench/device/session10f.sh -- does a smaller chunk shorten the cold pipeline's
# fill (the first chunk is decoded and copied up before any compute starts)? 22 cold SF 10 queries and
# 5 cold SF 100 queries with the default chunk (2**25 rows on an H200) and smaller ones, alternating
source bench/device/setup.sh
tpch_data 10
all=$(seq -s, 1 22)
run() { env "$@" python3 bench/device/coldpass.py 10 $all 1 2>&1 | tee -a $OUT/coldpass_chunks.log | head -1; }
run GLINT_CHUNK_ROWS=; run GLINT_CHUNK_ROWS=8388608; run GLINT_CHUNK_ROWS=16777216; run GLINT_CHUNK_ROWS=; run GLINT_CHUNK_ROWS=8388608
tpch_data 100
run100() { env "$@" python3 bench/device/coldpass.py 100 1,6,3,9,18 1 2>&1 | tee -a $OUT/coldpass100_chunks.log | head -1; }
run100 GLINT_CHUNK_ROWS=; run100 GLINT_CHUNK_ROWS=8388608
