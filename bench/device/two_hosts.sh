# Two hosts simulated on one host of 4 GPUs: two torchrun launchers (--nnodes 2
# --nproc-per-node 2), node 0 on GPUs 0-1 and node 1 on GPUs 2-3, meeting at one
# rendezvous. NCCL is kept off NVLink and shared memory (NCCL_P2P_DISABLE=1,
# NCCL_SHM_DISABLE=1, NCCL_IB_DISABLE=1), so every pair of ranks talks through NCCL's
# socket transport, as between hosts without InfiniBand. Node 0's rank 0 runs
# `glint bench tpch` and checks every answer against DuckDB.
#
#   bash bench/device/two_hosts.sh OUT_DIR [SF] [extra glint bench arguments...]
#
# Writes OUT_DIR/node0 (the bench report), OUT_DIR/node{0,1}.log, and, with
# TWO_HOSTS_EXCHANGE=1, OUT_DIR/exchange (glint bench exchange over the same transport).
set -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh" || exit 1
out=${1:?usage: two_hosts.sh OUT_DIR [SF] [glint bench arguments...]}
sf=${2:-10}
shift $(( $# >= 2 ? 2 : 1 ))
mkdir -p "$out"
[ "$(nvidia-smi -L | wc -l)" -ge 4 ] || { echo "two_hosts.sh: needs 4 GPUs" >&2; exit 1; }
"$PY" -c "from glint.workloads import tpch; tpch.ensure_tpch_data($sf, progress=False)" || exit 1
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
port=$(( 29500 + RANDOM % 1000 ))
node() {   # node RANK GPUS ARGS...
    local rank=$1 gpus=$2
    shift 2
    CUDA_VISIBLE_DEVICES=$gpus "$PY" -m torch.distributed.run --nnodes 2 --nproc-per-node 2 --node-rank "$rank" \
        --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$port" -m glint "$@"
}
run_both() {   # run_both LOG_PREFIX glint ARGS...: both launchers, node 0's status
    local prefix=$1
    shift
    node 1 2,3 "$@" > "$out/${prefix}node1.log" 2>&1 &
    local other=$!
    node 0 0,1 "$@" 2>&1 | tee "$out/${prefix}node0.log"
    local rc=$?
    wait $other || rc=${rc:-1}
    return $rc
}
t0=$(date +%s)
run_both "" bench tpch --sf "$sf" --device cuda --ranks env --no-cold --no-duckdb-parquet --out "$out/node0" "$@"
rc=$?
echo "two_hosts: tpch sf $sf rc=$rc in $(( $(date +%s) - t0 )) s"
if [ "${TWO_HOSTS_EXCHANGE:-0}" = 1 ]; then
    port=$(( port + 1 ))
    run_both "exchange-" bench exchange --device cuda --ranks env --sizes 16MB,256MB --out "$out/exchange"
    echo "two_hosts: exchange rc=$?"
fi
exit $rc
