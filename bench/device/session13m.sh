# usage (on the device): bash bench/device/session13m.sh -- warm TPC-H SF 10 with this session's scan knobs set
# back (OLD) and as they are (NEW), interleaved on one host (the final report's warm total rose 1.00 -> 1.27 s)
source bench/device/setup.sh
tpch_data 10
OLD="GLINT_READ_GAP=65536 GLINT_PINNED_BUFFERS=16 GLINT_STRING_TASK_GROUPS=1000000 GLINT_RAW_INDEX_BLOCK=1000000 GLINT_FOOTER_THREADS=1 GLINT_SCAN_PRIORITY=0"
NEW="GLINT_SCAN_PRIORITY=2"
for v in OLD NEW OLD NEW; do echo -n "$v "; env ${!v} python3 -m glint.cli bench tpch --sf 10 --runs 3 --no-duckdb --no-cold --out $OUT/$v 2>&1 | grep -E "│ total" | cut -c1-60; done
