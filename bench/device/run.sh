#!/usr/bin/env bash
# One benchmark run on a GPU (or CPU) machine, with everything it leaves in one directory:
#
#   bench/device/run.sh OUT_DIR tpch|ssb|exchange [glint bench flags...]
#
# e.g. bench/device/run.sh "$OUT/tpch-sf100" tpch --sf 100 --device cuda --runs 3 --no-duckdb-memory
#
# 1. sets up the environment (bench/device/env.sh: carried wheels, this checkout on the path)
#    and checks that torch, triton, pyarrow, sqlglot and duckdb import;
# 2. generates the data set at --sf unless it is there already or --data is given
#    (bench/device/gendata.py; GLINT_DATA, default /tmp/glint-data, says where);
# 3. runs `glint bench` with the flags given and --out OUT_DIR, logging a line per step
#    (GLINT_BENCH_LOG=1), so a run cut off by a time limit still shows how far it got;
# 4. leaves in OUT_DIR: the bench's JSON, markdown and chart, machine.txt (GPU, versions),
#    gendata.log and run.log; prints the report's table and the exit status.
set -uo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
out=$1; bench=$2; shift 2
source "$(dirname "${BASH_SOURCE[0]}")/env.sh" || exit 1
mkdir -p "$out"

{
    date -u +%FT%TZ
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    echo "$(nproc) CPUs, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM"
    glint_env_check
} > "$out/machine.txt" 2>&1 || { cat "$out/machine.txt"; exit 1; }
cat "$out/machine.txt"

sf=1; data=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
        --sf) sf=${args[i + 1]} ;;
        --sf=*) sf=${args[i]#--sf=} ;;
        --data) data=${args[i + 1]} ;;
        --data=*) data=${args[i]#--data=} ;;
    esac
done
if [ "$bench" != exchange ] && [ -z "$data" ]; then
    "$PY" "$GLINT_ROOT/bench/device/gendata.py" "$bench" "$sf" > "$out/gendata.log" 2>&1 \
        || { tail -20 "$out/gendata.log"; exit 1; }
    cat "$out/gendata.log"
    sync
fi

echo "== glint bench $bench $* ($(date -u +%T))"
GLINT_BENCH_LOG=1 "$PY" -m glint bench "$bench" "$@" --out "$out" > "$out/run.log" 2>&1
rc=$?
if compgen -G "$out/*.md" >/dev/null; then
    grep -h -E '^\|' "$out"/*.md | cut -c1-200
else
    tail -40 "$out/run.log" | cut -c1-200
fi
echo "== glint bench $bench: rc=$rc ($(date -u +%T)); results in $out"
exit $rc
