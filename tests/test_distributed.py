"""``examples/distributed_logp.py``: the sharded logistic-regression log-density run as 2
processes joined by ``jax.distributed.initialize`` (2 CPU devices each, gloo collectives,
a 4-device mesh) gives every process the one-process value and gradient to 1e-12.

The workers are subprocesses of the example's launcher, on a free port, under a 120 s
timeout; a run takes about 2 s.
"""

from __future__ import annotations

import numpy as np
import pytest

from examples import distributed_logp as dl


@pytest.fixture(scope="module")
def results():
    return dl.launch(num_processes=2, cpu_devices=2, timeout=120.0)


def test_two_processes_span_one_four_device_mesh(results):
    assert [r["process"] for r in results] == [0, 1]
    assert all(r["devices"] == 4 and r["local_devices"] == 2 for r in results)


def test_every_process_gets_the_one_process_value_and_gradient(results):
    value, grad = dl.reference()
    for r in results:
        assert r["logp"] == pytest.approx(value, rel=1e-12)
        np.testing.assert_allclose(r["grad"], grad, rtol=0, atol=1e-12 * np.max(np.abs(grad)))
    dl.check(results)


def test_the_check_refuses_a_process_that_disagrees(results):
    off = [dict(r, logp=r["logp"] * (1 + 1e-9)) for r in results]
    with pytest.raises(ValueError, match=r"process 0: logp -2851\.58"):
        dl.check(off)
    grad = [dict(r, grad=[g + 1e-6 for g in r["grad"]]) for r in results]
    with pytest.raises(ValueError, match="process 0: gradient off by 1e-06"):
        dl.check(grad)


def test_a_failing_worker_is_reported_with_its_error():
    # 4096 rows do not split over 2 x 3 devices: each worker stops with JAX's error
    with pytest.raises(RuntimeError, match=r"worker 0 exited 1:\n(.|\n)*IndivisibleError"):
        dl.launch(num_processes=2, cpu_devices=3, timeout=120.0)
