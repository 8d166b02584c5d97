# usage (on the device): bash bench/device/session14c.sh -- staging / decoding thread counts interleaved (five SF 100
# queries, SF 10's 22), with lock-free FileHandles; the GIL's share of the wall in cold Q1 and Q12
source bench/device/setup.sh
tpch_data 100 10; sync
A="GLINT_STAGING_THREADS=8 GLINT_DECODE_THREADS=16"; B="GLINT_STAGING_THREADS=4 GLINT_DECODE_THREADS=8"
C="GLINT_STAGING_THREADS=4 GLINT_DECODE_THREADS=4"; D="GLINT_STAGING_THREADS=6 GLINT_DECODE_THREADS=8"
E="GLINT_STAGING_THREADS=4 GLINT_DECODE_THREADS=12"
for v in A B C D E A B C D E; do echo -n "$v "; env ${!v} python3 bench/device/consdiag.py 100 1,6,12,9,3 2>&1 | tee -a $OUT/threads100.log | head -1; done
for v in A B A B; do echo -n "$v "; env ${!v} python3 bench/device/coldpass.py 10 "$(seq -s, 1 22)" 1 2>&1 | tee -a $OUT/threads10.log | head -1; done
for q in 1 12; do bash bench/device/gilshare.sh 100 $q $B; done
