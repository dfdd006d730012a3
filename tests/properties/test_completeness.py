"""Every concrete Op has a NumPy and a JAX implementation and an op record."""

from __future__ import annotations

import importlib
import pkgutil

import rewritekit.tensor
from rewritekit.backends.jax import _load_implementations as load_jax
from rewritekit.backends.jax import jax_funcify
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Op
from rewritekit.tensor.ufunc import Elemwise
from tests.records import collect


def _concrete_ops() -> set[type[Op]]:
    for info in pkgutil.iter_modules(rewritekit.tensor.__path__):
        importlib.import_module(f"rewritekit.tensor.{info.name}")
    found: set[type[Op]] = set()
    stack = [Op]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("rewritekit.tensor") and not cls.abstract:
            found.add(cls)
    return found


def test_every_concrete_op_has_a_record():
    covered = {op for record in collect() for op in record.ops}
    missing = sorted(op.__name__ for op in _concrete_ops() - covered)
    assert not missing, f"Ops without an op record: {missing}"


def test_every_concrete_op_has_both_implementations():
    load_jax()
    missing = []
    for op in _concrete_ops():
        for name, dispatcher in [("numpy", numpy_funcify), ("jax", jax_funcify)]:
            if dispatcher.dispatch(op) is dispatcher.dispatch(object):
                missing.append(f"{op.__name__} ({name})")
    assert not missing, f"Ops without a backend implementation: {sorted(missing)}"


def test_every_differentiable_op_has_a_vjp():
    missing = sorted(
        op.__name__ for op in _concrete_ops() if op.differentiable and op.vjp is Op.vjp
    )
    assert not missing, f"differentiable Ops without a vjp: {missing}"


def test_every_differentiable_elementwise_op_has_a_derivative_rule():
    """Elementwise Ops inherit ``Elemwise.vjp``, which reads the rule ``defvjp`` gave them."""
    missing = sorted(
        op.__name__
        for op in _concrete_ops()
        if issubclass(op, Elemwise)
        and op.differentiable
        and op.vjp is Elemwise.vjp
        and op.vjp_rule is None
    )
    assert not missing, f"elementwise Ops without a derivative rule: {missing}"
