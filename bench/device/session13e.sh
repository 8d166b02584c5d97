# usage (on the device): bash bench/device/session13e.sh -- 1 MiB read gap, lazy raw index, footers side by
# side, split dictionary tasks: the five SF 100 queries cold, with 16 and 48 pinned buffers; SF 10's 22 cold
source bench/device/setup.sh
tpch_data 100 10
sync; echo "synced after $(( $(date +%s) - t0 )) s"
for b in 16 48 16 48; do cold_sf100 cold100.log GLINT_PINNED_BUFFERS=$b; done
for b in 16 48; do cold_sf10 cold10.log GLINT_PINNED_BUFFERS=$b; done
