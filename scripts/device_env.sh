# Source on the GPU machine: installs the carried wheels (.whl) into /tmp/site and
# puts glint (this checkout), them and tpchgen-cli on the paths. The GPU image has
# torch, triton, numpy and pyarrow already.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || return 1
export PYTHONPATH="$PWD:/tmp/site${PYTHONPATH:+:$PYTHONPATH}" PATH="/tmp/site/bin:$PATH" PYTHONUNBUFFERED=1
export GLINT_DATA=/tmp/glint-data
glint() { python3 -m glint "$@"; }
