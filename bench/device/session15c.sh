# usage (on the device, .old = the glint package at the session's start, 2da8bb6): bash bench/device/session15c.sh
# the CUDA tests; five SF 100 queries (consdiag.py): the session's start (OLD) against the final code (NEW), and
# NEW with GLINT_RUN_GAP at 64 KiB and 1 MiB (256 KiB by default), interleaved on one host; SF 10's 22 queries
# (coldpass.py), OLD against NEW
source bench/device/setup.sh
timeout 200 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ > $OUT/tests.log 2>&1; tail -1 $OUT/tests.log
grep -E "^(FAILED|ERROR)" $OUT/tests.log | head -5
tpch_data 100 10; sync
OLD="PYTHONPATH=/tmp/site:$PWD/.old"; NEW="PYTHONPATH=/tmp/site:$PWD"
GAP64K="$NEW GLINT_RUN_GAP=65536"; GAP1M="$NEW GLINT_RUN_GAP=1048576"
for v in OLD NEW GAP64K GAP1M OLD NEW GAP64K GAP1M; do
    echo -n "$v "; env ${!v} timeout 100 python3 bench/device/consdiag.py 100 1,6,12,9,3 2>&1 | sed "s/^plain/$v/" | tee -a $OUT/final100.log | head -1
done
for v in OLD NEW; do echo -n "$v "; env ${!v} timeout 100 python3 bench/device/coldpass.py 10 "$(seq -s, 1 22)" 1 2>&1 | tee -a $OUT/final10.log | head -1; done
