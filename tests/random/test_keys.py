"""``rr.split`` and ``rr.fold_in`` give JAX's numbers on both backends, vectorize (a key
per chain), and typed JAX keys (``jax.random.key``) are accepted where a raw key is."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import rewritekit as rk
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, ShapeError

BACKENDS = ["numpy", "jax"]
key = rr.key("key")


@pytest.mark.parametrize("backend", BACKENDS)
def test_split_and_fold_in_give_jax_numbers(backend):
    d = rt.scalar("d", dtype="int32")
    keys = rr.split(key, 4)
    f = rk.function(
        [key, d], [keys, rr.fold_in(keys[2], d), rr.split(rr.fold_in(key, 7), 2)], backend=backend
    )
    for seed, data in [(0, 0), (3, -5), (2**40, 2**31 - 1)]:
        raw = rr.seed(seed)
        got = f(raw, np.int32(data))
        expected = [
            jax.random.split(raw, 4),
            jax.random.fold_in(jax.random.split(raw, 4)[2], np.uint32(data & 0xFFFFFFFF)),
            jax.random.split(jax.random.fold_in(raw, 7), 2),
        ]
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_key_per_chain_vectorizes_and_draws_like_a_loop(backend):
    i = rt.scalar("i", dtype="int64")
    chains = rt.vector("chains", dtype="int64")
    _, draw = rr.normal(rr.fold_in(key, i), 0.0, 1.0, size=(3,))
    batched = rk.vectorize(draw, {i: chains})
    f = rk.function([key, chains], batched, backend=backend)
    one = rk.function([key, i], draw, backend=backend)
    got = f(rr.seed(1), np.arange(4))
    assert got.shape == (4, 3) and len({tuple(row) for row in got.tolist()}) == 4
    for c in range(4):
        np.testing.assert_array_equal(got[c], one(rr.seed(1), c))


def test_typed_jax_keys_are_accepted_as_raw_keys():
    f = rk.function([key], rr.split(key, 2), backend="numpy")
    np.testing.assert_array_equal(f(jax.random.key(5)), jax.random.split(jax.random.PRNGKey(5)))
    with pytest.raises(ValueError, match=r"input 'key' \(position 0\): expected shape \(2\)"):
        f(jax.random.key(5, impl="rbg"))  # another generator's key data: uint32[4]


def test_key_errors_name_the_fault():
    with pytest.raises(ShapeError, match="split: n must be an int >= 0"):
        rr.split(key, -1)
    with pytest.raises(DTypeError, match="fold_in: data must be an integer scalar"):
        rr.fold_in(key, rt.scalar("f"))
    with pytest.raises(DTypeError, match="split: the key must be"):
        rr.split(rt.vector("v"), 2)
