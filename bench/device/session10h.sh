# usage (on the device): bash bench/device/session10h.sh -- fewer decoding threads against the GIL's per-call
# waits (16 vCPUs; pa.Codec scaled only to 8 threads): 22 cold SF 10 queries and 5 cold SF 100 queries
# with GLINT_DECODE_THREADS 16 (default), 8 and 12, alternating
source bench/device/setup.sh
tpch_data 10
all=$(seq -s, 1 22)
run() { env "$@" python3 bench/device/coldpass.py 10 $all 1 2>&1 | tee -a $OUT/coldpass_threads.log | head -1; }
run GLINT_DECODE_THREADS=; run GLINT_DECODE_THREADS=8; run GLINT_DECODE_THREADS=12; run GLINT_DECODE_THREADS=; run GLINT_DECODE_THREADS=8
tpch_data 100
run100() { env "$@" python3 bench/device/coldpass.py 100 1,6,3,9,18 1 2>&1 | tee -a $OUT/coldpass100_threads.log | head -1; }
run100 GLINT_DECODE_THREADS=; run100 GLINT_DECODE_THREADS=8; run100 GLINT_DECODE_THREADS=
