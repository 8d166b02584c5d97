# usage (on the device): bash bench/device/session4a.sh -- the CUDA runs of tests/test_groupsets.py
# that the last session's 200 s limit cut off (out of core under tiny budgets, planning), one
# process per test so they run side by side on the one GPU
source bench/device/setup.sh
mkdir -p $OUT/groupsets
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $OUT/groupsets/device.txt
python3 -m pytest --collect-only -q tests/test_groupsets.py --device cuda 2>/dev/null | grep "::" | sed -n '26,$p' > /tmp/ids
i=0
while read -r id; do
  i=$((i+1))
  ( timeout -s INT ${LIMIT:-330} python3 -m pytest -q -p no:cacheprovider --device cuda "$id" > $OUT/groupsets/t$i.log 2>&1; echo "rc=$? $id" >> $OUT/groupsets/t$i.log ) &
done < /tmp/ids
# and the first 25 again at once, in 4 processes, to see the whole file pass on this commit
python3 -m pytest --collect-only -q tests/test_groupsets.py --device cuda 2>/dev/null | grep "::" | sed -n '1,25p' > /tmp/ids0
split -n l/4 /tmp/ids0 /tmp/ids0.
for f in /tmp/ids0.*; do
  ( mapfile -t a < $f; timeout -s INT ${LIMIT:-330} python3 -m pytest -q -p no:cacheprovider --device cuda "${a[@]}" > $OUT/groupsets/first-$(basename $f).log 2>&1; echo "rc=$?" >> $OUT/groupsets/first-$(basename $f).log ) &
done
wait
cd $OUT && tar czf groupsets.tgz groupsets && rm -rf groupsets
