# usage (on the device): bash bench/device/session13a.sh -- host read ceilings (pread, memcpy, mmap+cudaHostRegister)
# beside the current code's five SF 100 queries cold
source bench/device/setup.sh
tpch_data 100
uname -r; grep -E "MemTotal|MemFree|^Cached|Dirty" /proc/meminfo; cat /sys/kernel/mm/transparent_hugepage/enabled
fincore $GLINT_DATA/tpch/sf100/lineitem.parquet 2>&1 | tail -2
timeout 200 python3 bench/device/readceil.py 100 8 2>&1 | tee $OUT/readceil.log
cold_sf100 cold100.log
grep -E "Cached|Dirty" /proc/meminfo
