# usage (on the device): bash bench/device/session13j.sh -- the scans' task order: A first come first served,
# B by (scan, chunk), D by (chunk, scan); interleaved on one host, SF 10's 22 and SF 100's five, cold
source bench/device/setup.sh
tpch_data 100 10
sync; echo "synced after $(( $(date +%s) - t0 )) s"
A="GLINT_SCAN_PRIORITY=0"; B="GLINT_SCAN_PRIORITY=1"; D="GLINT_SCAN_PRIORITY=2"
cold_sf10 warmup.log $B > /dev/null
for r in 1 2 3; do for v in A B D; do echo -n "$v "; cold_sf10 cold10.log ${!v}; done; done
for r in 1 2; do for v in A B D; do echo -n "$v "; cold_sf100 cold100.log ${!v}; done; done
