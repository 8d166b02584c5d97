# usage (on the device, after setup.sh): bash bench/device/gilprof.sh SF Q -- which Python code holds the GIL
# during one cold query, attached after the warm-up (py-spy, carried in .whl; --gil: only samples of the thread holding it), summed by
# thread and by function (bench/device/gilview.py)
sf=$1; q=$2
[ -x /tmp/pyspy/bin/py-spy ] || python3 -m pip install -q --no-index --no-deps --target /tmp/pyspy .whl/py_spy-*.whl
export PATH=/tmp/pyspy/bin:$PATH
rm -f /tmp/gil_mark
GIL_MARK=/tmp/gil_mark python3 bench/device/tracecold.py $sf $q > $OUT/gilprof.log 2>&1 &
while [ ! -s /tmp/gil_mark ] && kill -0 $! 2>/dev/null; do sleep 0.2; done
py-spy record --pid $(cat /tmp/gil_mark) --gil --threads --rate 1000 --format raw -o $OUT/gil_sf${sf}_q$q.raw \
    > $OUT/pyspy.log 2>&1 || tail -3 $OUT/pyspy.log
wait; grep "cold" $OUT/gilprof.log
python3 bench/device/gilview.py $OUT/gil_sf${sf}_q$q.raw > $OUT/gil_sf${sf}_q$q.txt; head -60 $OUT/gil_sf${sf}_q$q.txt
