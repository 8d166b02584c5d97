# usage (on the device): bash bench/device/session15b.sh -- small reads with the GIL held (NEW) against
# GLINT_HELD_READ=0 (every read through os.preadv), five SF 100 queries interleaved on one host; then the GIL's
# share in cold Q1, Q12 and Q9 with RawSet and held reads (py-spy: gilshare.sh); the CUDA tests first
source bench/device/setup.sh
timeout 200 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ > $OUT/tests.log 2>&1; tail -1 $OUT/tests.log
grep -E "^(FAILED|ERROR)" $OUT/tests.log | head -5
tpch_data 100; sync
for v in NEW HELD0 NEW HELD0; do
    echo -n "$v "; e=""; [ $v = HELD0 ] && e="GLINT_HELD_READ=0"
    env $e timeout 100 python3 bench/device/consdiag.py 100 1,6,12,9,3 2>&1 | sed "s/^plain/$v/" | tee -a $OUT/held100.log | head -1
done
for q in 1 12 9; do bash bench/device/gilshare.sh 100 $q; done
