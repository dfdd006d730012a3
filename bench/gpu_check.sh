#!/bin/bash
# Issue 16's GPU checks (run from the repository root on a machine with a GPU and a CUDA
# build of jax): the vectorized graphs' tests with JAX on the GPU, bench/vectorize.py, and
# the one-device log-density of bench/sharding.py. Results go to stdout (and to $OUT when
# set). Where rewritekit is not installed, put its pure-Python dependencies (kanren,
# unification, cons, etuples, with their dist-info folders) in .devsite/: the script puts
# .devsite and the repository on PYTHONPATH.
export PYTHONPATH=$PWD/.devsite:$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import jax, numpy, scipy; print('jax', jax.__version__, jax.devices(), 'numpy', numpy.__version__, 'scipy', scipy.__version__)"
echo "== tests: vectorized graphs, JAX on the GPU against NumPy and jax.vmap(jax.grad)"
timeout 170 python3 -m pytest -q -p no:cacheprovider tests/test_vectorize.py 2>&1 | tail -25
echo "== bench/vectorize.py"
timeout 200 python3 bench/vectorize.py 2>&1 | tee "$OUT/vectorize.txt" | tail -30
echo "== bench/sharding.py, one device (the GPU)"
for rows in 1000000 10000; do
    timeout 80 python3 bench/sharding.py --worker single --rows $rows --features 10 \
        --warmup 3 --repeats 20 2>&1 | tail -1 | cut -c1-300
done
