# usage (on the device): bash bench/device/session13f.sh -- this session's scan changes against the code before
# them (their knobs set back), interleaved on one host: SF 100's five queries and SF 10's 22, cold
source bench/device/setup.sh
tpch_data 100 10
sync; echo "synced after $(( $(date +%s) - t0 )) s"
OLD="GLINT_READ_GAP=65536 GLINT_PINNED_BUFFERS=16 GLINT_STRING_TASK_GROUPS=1000000 GLINT_RAW_INDEX_BLOCK=1000000 GLINT_FOOTER_THREADS=1"
NEW="GLINT_PINNED_BUFFERS=48"
for v in OLD NEW OLD NEW; do echo $v; cold_sf100 cold100.log ${!v}; done
for v in OLD NEW OLD NEW; do echo $v; cold_sf10 cold10.log ${!v}; done
