# usage (on the device, .old = the glint package before the bounds change carried): bash bench/device/session14h.sh --
# the CUDA tests with the final code; row-group bounds as stored (NEW) against before (OLD), five SF 100 queries
# (consdiag.py) interleaved on one host
source bench/device/setup.sh
timeout 300 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ > $OUT/tests.log 2>&1; tail -1 $OUT/tests.log
tpch_data 100; sync
OLD="PYTHONPATH=/tmp/site:$PWD/.old"; NEW="PYTHONPATH=/tmp/site:$PWD"
for v in OLD NEW OLD NEW; do echo -n "$v "; env ${!v} python3 bench/device/consdiag.py 100 1,6,12,9,3 2>&1 | tee -a $OUT/bounds100.log | head -1; done
