# usage (on the device): bash bench/device/session14b.sh -- where a cold query's main thread blocks (py-spy
# --idle --native, Q1 and Q12 at SF 100), staging / decoding thread counts interleaved, warm main-thread CPU
source bench/device/setup.sh
tpch_data 100; sync
for q in 1 12; do bash bench/device/blockprof.sh 100 $q; done
Q=1,6,12,9,3
A="GLINT_STAGING_THREADS=8"; B="GLINT_STAGING_THREADS=4"; C="GLINT_STAGING_THREADS=4 GLINT_DECODE_THREADS=8"; D="GLINT_STAGING_THREADS=2"
for v in A B C D A B C D; do echo -n "$v "; env ${!v} python3 bench/device/consdiag.py 100 $Q 2>&1 | tee -a $OUT/threads.log | head -1; done
python3 bench/device/consdiag.py 100 1,6,12,9 warm 2>&1 | tee -a $OUT/warm.log
