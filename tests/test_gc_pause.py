"""``rk.function``, ``rk.grad`` and ``rk.rewrite`` pause Python's cyclic collector while they
build (``rewritekit/ir/collector.py``) and leave it as they found it."""

from __future__ import annotations

import gc

import pytest

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.ir.collector import gc_paused


def test_paused_inside_and_restored_after():
    seen = []
    paused = gc_paused(lambda: seen.append(gc.isenabled()))
    assert gc.isenabled()
    paused()
    assert seen == [False]
    assert gc.isenabled()


def test_restored_after_an_error():
    @gc_paused
    def fails():
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        fails()
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off():
    gc.disable()
    try:
        x = rt.vector("x")
        rk.function([x], rk.grad(rt.sum(rt.exp(x)), x), backend="numpy", cache=False)
        rk.rewrite(rt.log(1 + rt.exp(x)))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_entry_points_pause_it():
    for entry in (rk.function, rk.grad, rk.rewrite):
        assert entry.__wrapped__ is not None  # functools.wraps of gc_paused
    x = rt.vector("x")
    f = rk.function([x], rk.grad(rt.sum(rt.exp(x)), x), backend="numpy", cache=False)
    assert gc.isenabled()
    assert f([0.0]).tolist() == [1.0]
