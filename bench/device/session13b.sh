# usage (on the device): bash bench/device/session13b.sh -- the staging alone (stagerate.py), and mmap + cudaHostRegister
source bench/device/setup.sh
tpch_data 100
timeout 250 python3 bench/device/stagerate.py 100 2>&1 | tee $OUT/stagerate.log
timeout 200 python3 bench/device/readceil.py 100 8 2>&1 | tee $OUT/readceil.log
