# usage (on the device): bash bench/device/session13g.sh -- the CUDA tests on this session's code; where the
# planner's time goes at SF 10 (plantime.py, sampletime.py)
source bench/device/setup.sh
tpch_data 1 10
timeout 300 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ > $OUT/tests.log 2>&1; tail -2 $OUT/tests.log
python3 bench/device/plantime.py 10 p > $OUT/plantime10.log 2>&1; grep total $OUT/plantime10.log
python3 bench/device/sampletime.py 10 > $OUT/sampletime10.log 2>&1; cat $OUT/sampletime10.log
