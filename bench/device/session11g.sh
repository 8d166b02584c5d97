# usage (on the device): bash bench/device/session11g.sh -- why Q6 at SF 100 is slow with the raw path: its
# cold trace, and the decoder's kernels on one scan chunk (torch.profiler)
source bench/device/setup.sh
tpch_data 10 100
python3 bench/device/splitbench.py 10 2>&1 | tail -45 | tee $OUT/splitbench.log
GLINT_PARQUET_DECODE=device python3 bench/device/tracecold.py 100 6 > $OUT/trace100_q6.txt 2>&1
head -30 $OUT/trace100_q6.txt
