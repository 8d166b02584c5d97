# usage (on the device): bash bench/device/session9f.sh -- the GIL switch interval (sys.setswitchinterval) against
# the scan's Python work on 24+ threads: 22 cold SF 10 queries and the SF 10 scan rate, default 5 ms against 0.5 ms
source bench/device/setup.sh
tpch_data 10
for s in "" 0.0005; do echo "== switch ${s:-default}"; SWITCH=$s python3 bench/device/scanrate.py 10 2>&1 | tail -2; done
run() { env "$@" python3 bench/device/coldpass.py 10 $(seq -s, 1 22) 1 2>&1 | tee -a $OUT/coldpass_switch.log | head -1; }
run SWITCH=; run SWITCH=0.0005; run SWITCH=; run SWITCH=0.0005; run SWITCH=0.001
