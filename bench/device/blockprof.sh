# usage (on the device, after setup.sh): bash bench/device/blockprof.sh SF Q -- where the main thread of a cold
# query blocks: py-spy --idle --native on consdiag.py, attached after the warm-up, read by blockview.py
sf=$1; q=$2
[ -x /tmp/pyspy/bin/py-spy ] || python3 -m pip install -q --no-index --no-deps --target /tmp/pyspy .whl/py_spy-*.whl
export PATH=/tmp/pyspy/bin:$PATH
rm -f /tmp/gil_mark
GIL_MARK=/tmp/gil_mark python3 bench/device/consdiag.py $sf $q > $OUT/blockprof_q$q.log 2>&1 &
while [ ! -s /tmp/gil_mark ] && kill -0 $! 2>/dev/null; do sleep 0.2; done
py-spy record --pid $(cat /tmp/gil_mark) --idle --native --threads --rate 250 --format raw -o $OUT/block_sf${sf}_q$q.raw \
    > $OUT/pyspy_q$q.log 2>&1 || tail -3 $OUT/pyspy_q$q.log
wait; cat $OUT/blockprof_q$q.log
python3 bench/device/blockview.py $OUT/block_sf${sf}_q$q.raw MainThread > $OUT/block_sf${sf}_q$q.txt
python3 bench/device/blockview.py $OUT/block_sf${sf}_q$q.raw glint-scan-upload >> $OUT/block_sf${sf}_q$q.txt
python3 bench/device/blockview.py $OUT/block_sf${sf}_q$q.raw glint-stage >> $OUT/block_sf${sf}_q$q.txt
head -45 $OUT/block_sf${sf}_q$q.txt
