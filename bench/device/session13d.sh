# usage (on the device): bash bench/device/session13d.sh -- where each thread's time goes in cold Q1 and Q6 at
# SF 100 (py-spy, all samples of running threads), and the five queries cold with 64 KiB and 1 MiB read gaps
source bench/device/setup.sh
tpch_data 100
sync; echo "synced after $(( $(date +%s) - t0 )) s"
[ -x /tmp/pyspy/bin/py-spy ] || python3 -m pip install -q --no-index --no-deps --target /tmp/pyspy .whl/py_spy-*.whl
export PATH=/tmp/pyspy/bin:$PATH
for q in 1 6; do
  rm -f /tmp/gil_mark
  GIL_MARK=/tmp/gil_mark python3 bench/device/tracecold.py 100 $q > $OUT/prof_q$q.log 2>&1 &
  while [ ! -s /tmp/gil_mark ] && kill -0 $! 2>/dev/null; do sleep 0.2; done
  py-spy record --pid $(cat /tmp/gil_mark) --threads --rate 500 --format raw -o $OUT/cpu_q$q.raw > $OUT/pyspy.log 2>&1 || tail -3 $OUT/pyspy.log
  wait; grep cold $OUT/prof_q$q.log
  python3 bench/device/cumview.py $OUT/cpu_q$q.raw 30 > $OUT/cpu_q$q.txt
done
for g in 65536 1048576 65536 1048576; do cold_sf100 cold100.log GLINT_READ_GAP=$g; done
