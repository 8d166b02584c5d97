# usage (on the device): bash bench/device/session14a.sh -- where cold SF 100 queries' consumer time goes
# (consdiag.py: process CPU, main-thread CPU, device waits), staging threads 8 / 4, and GPU busy (gpuprof.py)
source bench/device/setup.sh
tpch_data 100; sync
python3 -V; nproc
Q=1,6,12,9
for m in plain sync; do python3 bench/device/consdiag.py 100 $Q $m 2>&1 | tee -a $OUT/consdiag.log; done
GLINT_STAGING_THREADS=4 python3 bench/device/consdiag.py 100 $Q 2>&1 | tee -a $OUT/consdiag.log
python3 bench/device/consdiag.py 100 $Q 2>&1 | tee -a $OUT/consdiag.log
for q in 6 12; do python3 bench/device/gpuprof.py 100 $q 2>&1 | head -30 | tee -a $OUT/gpuprof.log; done
