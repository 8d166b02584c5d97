# usage (on the device): bash bench/device/session13l.sh -- this session's scan changes (NEW) against their knobs
# set back (OLD), the 22 TPC-H SF 100 queries cold (coldpass.py), interleaved on one host
source bench/device/setup.sh
tpch_data 100
OLD="GLINT_READ_GAP=65536 GLINT_PINNED_BUFFERS=16 GLINT_STRING_TASK_GROUPS=1000000 GLINT_RAW_INDEX_BLOCK=1000000 GLINT_FOOTER_THREADS=1 GLINT_SCAN_PRIORITY=0"
NEW="GLINT_SCAN_PRIORITY=2"
for v in OLD NEW OLD NEW; do echo -n "$v "; env ${!v} python3 bench/device/coldpass.py 100 "$(seq -s, 1 22)" 1 2>&1 | tee -a $OUT/cold100_22.log | head -1; done
