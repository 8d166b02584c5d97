# usage (on the device): bash bench/device/session13i.sh -- A: scans first come first served; B: by priority
# (default); C: B with a 1 ms GIL switch interval. Interleaved on one host, SF 10's 22 and SF 100's five, cold
source bench/device/setup.sh
tpch_data 100 10
sync; echo "synced after $(( $(date +%s) - t0 )) s"
A="GLINT_SCAN_PRIORITY=0"; B="GLINT_SCAN_PRIORITY=1"; C="GLINT_SCAN_PRIORITY=1 SWITCH=0.001"
cold_sf10 warmup.log $B > /dev/null
for r in 1 2 3; do for v in A B C; do echo -n "$v "; cold_sf10 cold10.log ${!v}; done; done
for r in 1 2; do for v in A B C; do echo -n "$v "; cold_sf100 cold100.log ${!v}; done; done
