# usage (on the device): bash bench/device/session6e.sh -- cold SF10 queries under thread / GIL settings
source bench/device/setup.sh
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(10, progress=False)" > $OUT/gen.log 2>&1
Q=1,3,6,9,10,18,21
run() { timeout 100 env "$@" 2>&1 | grep -v Warn | tail -1; }
run python3 bench/device/coldknobs.py 10 $Q
run python3 bench/device/coldknobs.py 10 $Q 0.5
run GLINT_DECODE_THREADS=8 python3 bench/device/coldknobs.py 10 $Q
run GLINT_DECODE_THREADS=8 python3 bench/device/coldknobs.py 10 $Q 0.5
run GLINT_PARQUET_DECODE=device python3 bench/device/coldknobs.py 10 $Q
run GLINT_PARQUET_DECODE=device python3 bench/device/coldknobs.py 10 $Q 0.5
run GLINT_PARQUET_DECODE=device GLINT_DECODE_THREADS=8 python3 bench/device/coldknobs.py 10 $Q 0.5
