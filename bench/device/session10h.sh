# usage (on the device): bash bench/device/session10h.sh -- fewer decoding threads against the GIL's per-call
# waits (16 vCPUs; pa.Codec scaled only to 8 threads): 22 cold SF 10 queries and 5 cold SF 100 queries
# with GLINT_DECODE_THREADS 16 (default), 8 and 12, alternating
source bench/device/setup.sh
tpch_data 10
run() { cold_sf10 coldpass_threads.log "$@"; }
run GLINT_DECODE_THREADS=; run GLINT_DECODE_THREADS=8; run GLINT_DECODE_THREADS=12; run GLINT_DECODE_THREADS=; run GLINT_DECODE_THREADS=8
tpch_data 100
run100() { cold_sf100 coldpass100_threads.log "$@"; }
run100 GLINT_DECODE_THREADS=; run100 GLINT_DECODE_THREADS=8; run100 GLINT_DECODE_THREADS=
