# usage (on the device): bash bench/device/session14f.sh -- the staging's read gap (GLINT_READ_GAP: 1 MiB, the
# default, against 4 and 16 MiB: fewer reads, each a trip through the saturated GIL, for more bytes copied)
# interleaved: five SF 100 queries (consdiag.py) and SF 10's 22 (coldpass.py)
source bench/device/setup.sh
tpch_data 100 10; sync
A="GLINT_READ_GAP=1048576"; B="GLINT_READ_GAP=4194304"; C="GLINT_READ_GAP=16777216"
for v in A B C A B C; do echo -n "$v "; env ${!v} python3 bench/device/consdiag.py 100 1,6,12,9,3 2>&1 | tee -a $OUT/gap100.log | head -1; done
for v in A B A B; do echo -n "$v "; env ${!v} python3 bench/device/coldpass.py 10 "$(seq -s, 1 22)" 1 2>&1 | tee -a $OUT/gap10.log | head -1; done
