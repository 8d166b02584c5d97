# usage (on the device): bash bench/device/session12c.sh -- GPU tests again; cold Q1 at SF 100: a trace and a
# CUDA profile (where the wall goes: the GPU's decoding or the host)
source bench/device/setup.sh
timeout 240 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ > $OUT/tests.log 2>&1; tail -2 $OUT/tests.log
tpch_data 100
python3 bench/device/gpuprof.py 100 1 2>&1 | tee $OUT/gpuprof_q1.log | head -30
python3 bench/device/tracecold.py 100 1 > $OUT/tracecold.log 2>&1; tail -3 $OUT/tracecold.log
for f in $OUT/*.json; do python3 bench/device/traceview.py $f > ${f%.json}.txt 2>&1; head -25 ${f%.json}.txt; done
