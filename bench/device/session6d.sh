# usage (on the device): bash bench/device/session6d.sh -- what scales over threads in the host's page planning
source bench/device/setup.sh
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(10, progress=False)" > $OUT/gen.log 2>&1
python3 -m pytest -q -x -p no:cacheprovider tests/test_parquet_pages.py 2>&1 | grep -E "^E |passed|failed" | head -12
python3 bench/device/gilcheck.py 10 2>&1 | grep -v Warn
