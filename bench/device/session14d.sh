# usage (on the device, with .old = `git archive 2d869ff glint` carried): bash bench/device/session14d.sh -- the scan's
# host side with less Python per row group (NEW) against the session's start (OLD, 2d869ff), interleaved on one
# host: five SF 100 queries (consdiag.py) and SF 10's 22 (coldpass.py); the GIL's share in NEW's cold Q1 and Q12;
# the CUDA tests
source bench/device/setup.sh
timeout 300 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ > $OUT/tests.log 2>&1; tail -2 $OUT/tests.log
tpch_data 100 10; sync
OLD="PYTHONPATH=/tmp/site:$PWD/.old"; NEW="PYTHONPATH=/tmp/site:$PWD"
for v in OLD NEW OLD NEW; do echo -n "$v "; env ${!v} python3 bench/device/consdiag.py 100 1,6,12,9,3 2>&1 | tee -a $OUT/new100.log | head -1; done
for v in OLD NEW OLD NEW; do echo -n "$v "; env ${!v} python3 bench/device/coldpass.py 10 "$(seq -s, 1 22)" 1 2>&1 | tee -a $OUT/new10.log | head -1; done
for q in 1 12; do bash bench/device/gilshare.sh 100 $q; done
