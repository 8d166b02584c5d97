# usage (on the device): bash bench/device/session10f.sh -- does a smaller chunk shorten the cold pipeline's
# fill (the first chunk is decoded and copied up before any compute starts)? 22 cold SF 10 queries and
# 5 cold SF 100 queries with the default chunk (2**25 rows on an H200) and smaller ones, alternating
source bench/device/setup.sh
tpch_data 10
run() { cold_sf10 coldpass_chunks.log "$@"; }
run GLINT_CHUNK_ROWS=; run GLINT_CHUNK_ROWS=8388608; run GLINT_CHUNK_ROWS=16777216; run GLINT_CHUNK_ROWS=; run GLINT_CHUNK_ROWS=8388608
tpch_data 100
run100() { cold_sf100 coldpass100_chunks.log "$@"; }
run100 GLINT_CHUNK_ROWS=; run100 GLINT_CHUNK_ROWS=8388608
