# Sourced at the start of every device command: installs the carried wheels
# (.whl, see the device tool's README) into /tmp/site and puts glint on the path.
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if [ ! -d /tmp/site ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH
export GLINT_DATA=${GLINT_DATA:-/tmp/glint-data}
glint() { python3 -m glint.cli "$@"; }
# tpch_data SF...: the TPC-H data of these scale factors (generated once per machine; log in $OUT/gen.log);
# sets t0, the start of the call's timed part
tpch_data() {
    t0=$(date +%s)
    python3 -c "import sys; from glint.bench import tpch; [tpch.ensure_tpch_data(float(s), progress=False) for s in sys.argv[1:]]" "$@" > $OUT/gen.log 2>&1
    echo "data ready after $(( $(date +%s) - t0 )) s"
}
# cold_sf10 LOG ENV...: the 22 TPC-H queries cold at SF 10 in a fresh process with ENV set (coldpass.py, one
# pass; its log appended to $OUT/LOG, its total printed); cold_sf100 LOG ENV...: the same for Q1, Q6, Q3, Q9, Q18
# at SF 100
cold_sf10() { local log=$1; shift; env "$@" python3 bench/device/coldpass.py 10 "$(seq -s, 1 22)" 1 2>&1 | tee -a "$OUT/$log" | head -1; }
cold_sf100() { local log=$1; shift; env "$@" python3 bench/device/coldpass.py 100 1,6,3,9,18 1 2>&1 | tee -a "$OUT/$log" | head -1; }
