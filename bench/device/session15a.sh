# usage (on the device, .old = the glint package at the session's start, 2da8bb6): bash bench/device/session15a.sh
# the CUDA tests with RawSet / FileRuns; then five SF 100 queries (consdiag.py), OLD against NEW, interleaved
source bench/device/setup.sh
timeout 240 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ > $OUT/tests.log 2>&1; tail -1 $OUT/tests.log
grep -E "^(FAILED|ERROR)" $OUT/tests.log | head -5
tpch_data 100 10; sync
OLD="PYTHONPATH=/tmp/site:$PWD/.old"; NEW="PYTHONPATH=/tmp/site:$PWD"
for v in OLD NEW OLD NEW; do echo -n "$v "; env ${!v} timeout 100 python3 bench/device/consdiag.py 100 1,6,12,9,3 2>&1 | tee -a $OUT/rawset100.log | head -1; done
