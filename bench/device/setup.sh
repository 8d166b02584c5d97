# Sourced at the start of every device command: installs the carried wheels
# (.whl, see the device tool's README) into /tmp/site and puts glint on the path.
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if [ ! -d /tmp/site ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH
export GLINT_DATA=${GLINT_DATA:-/tmp/glint-data}
glint() { python3 -m glint.cli "$@"; }
