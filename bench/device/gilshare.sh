# usage (on the device, after setup.sh): bash bench/device/gilshare.sh SF Q [ENV...] -- how much of a cold query's
# wall the GIL is held, and by which threads (py-spy --gil --nonblocking at 200 Hz on consdiag.py: samples
# against wall x 200)
sf=$1; q=$2; shift 2
[ -x /tmp/pyspy/bin/py-spy ] || python3 -m pip install -q --no-index --no-deps --target /tmp/pyspy .whl/py_spy-*.whl
export PATH=/tmp/pyspy/bin:$PATH
rm -f /tmp/gil_mark
env "$@" GIL_MARK=/tmp/gil_mark python3 bench/device/consdiag.py $sf $q > $OUT/gilshare_q$q.log 2>&1 &
while [ ! -s /tmp/gil_mark ] && kill -0 $! 2>/dev/null; do sleep 0.2; done
sleep 1.9
py-spy record --pid $(cat /tmp/gil_mark) --gil --nonblocking --threads --rate 200 --format raw -o $OUT/gilshare_q$q.raw \
    > $OUT/pyspy_gil_q$q.log 2>&1 || tail -3 $OUT/pyspy_gil_q$q.log
wait; tail -1 $OUT/gilshare_q$q.log
python3 - $OUT/gilshare_q$q.raw $OUT/gilshare_q$q.log <<'PY'
import collections, re, sys
per = collections.Counter()
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip().rpartition(" ")
    per[re.sub(r"\(\d+\)|0x[0-9a-f]+|\d+|_$", "", stack.split(";")[0]).strip()] += int(n)
wall = float(re.search(r" (\d+\.\d+) s:", open(sys.argv[2]).read().splitlines()[-1]).group(1))
tot = sum(per.values())
print(f"GIL held in {tot} samples of ~{wall * 200:.0f} (wall {wall:.2f} s at 200 Hz): {100 * tot / (wall * 200):.0f}%")
for k, v in per.most_common(8):
    print(f"  {v:6d} {100 * v / (wall * 200):5.1f}% of wall  {k}")
PY
