# usage (on the device): bash bench/device/session5b.sh -- find the device-side assert of TPC-H Q1 under 16 GB
source bench/device/setup.sh
export CUDA_LAUNCH_BLOCKING=1
python3 bench/device/widesum.py cuda 2>&1 | tail -5
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(10, progress=False)"
timeout 120 python3 bench/device/qdebug.py 10 16GB 1,6 2>&1 | grep -v "^frame\|Assertion" | tail -30
timeout 120 python3 bench/device/qdebug.py 10 2GB 1 2>&1 | grep -v "^frame\|Assertion" | tail -30
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(100, progress=False)"
timeout 240 python3 bench/device/qdebug.py 100 16GB 1 2>&1 | grep -v "^frame\|Assertion" | tail -40
