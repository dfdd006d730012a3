"""``rk.function``: rewrite a graph, lower it to a backend, and check the arguments of calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.backends import Backend, get_backend
from rewritekit.errors import DTypeError, GraphTypeError, RewriteMismatch
from rewritekit.ir import Constant, Var, as_var, graph_inputs
from rewritekit.rules import RewriteTrace, rewrite
from rewritekit.rules.library import simplify_loops

__all__ = ["CompiledFunction", "function"]

_SAFE_KINDS = {  # which kinds a Python scalar (weakly typed) may become
    bool: "biufc",
    int: "iufc",
    float: "fc",
    complex: "c",
}


class InputSpec:
    """What one positional argument must look like, precomputed for fast checks."""

    __slots__ = ("dtype", "exact", "label", "ndim", "static", "var")

    def __init__(self, var: Var, position: int) -> None:
        self.var = var
        self.dtype = np.dtype(var.dtype)
        self.ndim = var.ndim
        self.static = tuple((a, n) for a, n in enumerate(var.type.shape) if n is not None)
        # a fully static shape is checked on the fast path with one tuple comparison
        self.exact = var.type.shape if len(self.static) == self.ndim else None
        name = f"'{var.name}'" if var.name else "<unnamed>"
        self.label = f"input {name} (position {position})"

    def check(self, value: Any) -> Any:
        """``value`` cast to this input's dtype, or an error naming the input."""
        try:  # the fast path: an array (NumPy, JAX) of exactly this dtype and shape
            if value.dtype is self.dtype:
                if self.exact is None:
                    if value.ndim == self.ndim and not self.static:
                        return value
                elif value.shape == self.exact:
                    return value
        except AttributeError:
            pass
        return self._check(value)

    def _check(self, value: Any) -> Any:
        dtype = getattr(value, "dtype", None)
        if dtype is None or not hasattr(value, "shape"):
            value = self._from_python(value)
        elif dtype != self.dtype:
            if not np.can_cast(dtype, self.dtype, "safe"):
                raise DTypeError(
                    f"{self.label}: cannot safely cast {np.dtype(dtype).name} to "
                    f"{self.dtype.name}; cast the argument yourself (.astype('{self.dtype.name}'))"
                )
            # Cast on the host: a backend array type (JAX without x64) might not hold it.
            value = np.asarray(value).astype(self.dtype)
        shape = value.shape
        if len(shape) != self.ndim:
            raise ValueError(
                f"{self.label}: expected {self.ndim} dimensions ({self.var.type}), "
                f"got an array of shape {tuple(shape)}"
            )
        for axis, length in self.static:
            if shape[axis] != length:
                raise ValueError(
                    f"{self.label}: expected shape {_shape_text(self.var)}, "
                    f"got {tuple(shape)} (axis {axis} has length {shape[axis]})"
                )
        return value

    def _from_python(self, value: Any) -> np.ndarray:
        if isinstance(value, (bool, int, float, complex)):
            kinds = _SAFE_KINDS.get(type(value), "biufc")
        else:
            try:
                probe = np.asarray(value)
            except (TypeError, ValueError) as exc:
                raise GraphTypeError(
                    f"{self.label}: cannot use {type(value).__name__}: {exc}"
                ) from None
            if probe.dtype.kind not in "biufc":
                raise GraphTypeError(
                    f"{self.label}: expected numbers, got {type(value).__name__} of "
                    f"dtype {probe.dtype}"
                )
            kinds = {"b": "biufc", "i": "iufc", "u": "iufc", "f": "fc", "c": "c"}[probe.dtype.kind]
            value = probe if probe.dtype.kind != "i" else value  # Python ints stay weak
        if self.dtype.kind not in kinds:
            raise DTypeError(
                f"{self.label}: cannot safely cast {type(value).__name__} to {self.dtype.name}"
            )
        try:
            return np.asarray(value, dtype=self.dtype)
        except OverflowError as exc:
            raise DTypeError(f"{self.label}: {exc}") from None


def _finite(value: Any) -> np.ndarray:
    value = np.asarray(value)
    return np.isfinite(value) if value.dtype.kind in "fc" else np.ones(value.shape, bool)


def _term(var: Var) -> str:
    from rewritekit.rules import term_str

    return term_str(var, depth=3)


def _shape_text(var: Var) -> str:
    return "(" + ", ".join("?" if n is None else str(n) for n in var.type.shape) + ")"


def _checker(specs: list[InputSpec]) -> Any:
    """``args -> checked args`` for exactly ``len(specs)`` arguments: the per-call cost of
    argument checking is paid here (a one-input function skips building an iterator)."""
    if len(specs) == 1:
        check = specs[0].check
        return lambda args: (check(args[0]),)
    return lambda args: list(map(InputSpec.check, specs, args))


class CompiledFunction:
    """A graph compiled for one backend; call it with one value per input.

    Attributes:
        inputs: the input Vars, in call order.
        outputs: the requested outputs (one Var, or a list).
        graph: the output graph(s) that were lowered, after rewriting.
        trace: what the rewrite did, as (rule, before, after) entries, in order.
        backend: the backend's name.
        trust_input: skip argument checks and conversions (the caller guarantees arrays of
            exactly the right dtype and shape); set it on the function or at creation.
        check_rewrites: on every call, also evaluate each rewrite's original and
            replacement with the NumPy backend and raise ``RewriteMismatch`` naming the
            rule where they differ (a debug mode; slow).
    """

    def __init__(
        self,
        inputs: list[Var],
        outputs: Var | list[Var],
        graph: list[Var],
        trace: RewriteTrace,
        backend: Backend,
        trust_input: bool,
        check_rewrites: bool = False,
    ) -> None:
        self.inputs = inputs
        self.outputs = outputs
        self._single = isinstance(outputs, Var)
        self.graph: Var | list[Var] = graph[0] if self._single else graph
        self.trace = trace
        self.backend = backend.name
        self.trust_input = trust_input
        self._specs = [InputSpec(v, i) for i, v in enumerate(inputs)]
        self._check_all = _checker(self._specs)
        self._fn = backend.compile(inputs, graph)
        self.check_rewrites = check_rewrites
        self._checker: Any = None

    def __call__(self, *args: Any) -> Any:
        if not self.trust_input:
            if len(args) != len(self._specs):
                self.check_arguments(*args)  # raises, naming the inputs
            args = self._check_all(args)
        if self.check_rewrites and self.trace:
            self._check_rewrites(args)
        values = self._fn(*args)
        if self._single:
            return values[0]
        return values if type(values) is list else list(values)

    def _check_rewrites(self, args: tuple[Any, ...]) -> None:
        """Evaluate every (before, after) pair of the trace on ``args`` with NumPy."""
        from rewritekit.backends.numpy import NUMPY_BACKEND
        from rewritekit.testing import rule_tolerance

        # a rewrite inside a loop body or branch reads the inner graph's placeholders, whose
        # per-step values a call does not expose: it is listed in the trace, not checked here
        entries = [entry for entry in self.trace if not entry.where]
        if self._checker is None:
            pairs = [v for entry in entries for v in (entry.before, entry.after)]
            self._checker = NUMPY_BACKEND.compile(self.inputs, pairs)
        with np.errstate(all="ignore"):
            values = self._checker(*[np.asarray(a) for a in args])
        for position, entry in enumerate(entries):
            before, after = values[2 * position], values[2 * position + 1]
            rtol, atol = rule_tolerance(entry.before.dtype)
            close = np.isclose(before, after, rtol=rtol, atol=atol, equal_nan=True)
            # a rewrite may turn a NaN or an overflow into the exact value (stabilization)
            bad = ~close & ~(~_finite(before) & _finite(after))
            if bad.any():
                index = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
                raise RewriteMismatch(
                    f"rule {entry.rule!r} changed a value on these inputs: "
                    f"{_term(entry.before)} gives {np.asarray(before)[index]!r} but its "
                    f"replacement {_term(entry.after)} gives {np.asarray(after)[index]!r} "
                    f"(element {index}; rtol={rtol}, atol={atol})"
                )

    def check_arguments(self, *args: Any) -> tuple[Any, ...]:
        """The arguments as a call would pass them on: checked, cast, or an error naming
        the input. Useful to validate data without running the graph.
        """
        if len(args) != len(self._specs):
            names = ", ".join(s.var.name or "<unnamed>" for s in self._specs)
            raise TypeError(
                f"function takes {len(self._specs)} arguments ({names}), got {len(args)}"
            )
        return tuple([spec.check(a) for spec, a in zip(self._specs, args, strict=True)])

    @property
    def jax_fn(self) -> Any:
        """The pure, un-jitted JAX function of positional arrays (JAX backend only)."""
        fn = getattr(self._fn, "jax_fn", None)
        if fn is None:
            raise AttributeError(f"jax_fn exists only for the jax backend, not {self.backend!r}")
        if not self._single:
            return fn
        return lambda *args: fn(*args)[0]

    def __repr__(self) -> str:
        names = ", ".join(v.name or "<unnamed>" for v in self.inputs)
        return f"<CompiledFunction ({names}) backend={self.backend!r}>"


def function(
    inputs: Sequence[Var],
    outputs: Any,
    *,
    backend: str | Backend = "jax",
    rules: Any = "default",
    trust_input: bool = False,
    check_rewrites: bool = False,
) -> CompiledFunction:
    """Compile the graph from ``inputs`` to ``outputs`` into a callable.

    Args:
        inputs: the graph inputs, in call order. Inputs the outputs do not use are allowed.
        outputs: one Var (the call returns one array) or a list/tuple of them (it returns a
            list). Outputs may be inputs or constants; non-Var values become constants.
        backend: ``"jax"`` (default; ``jax.jit``), ``"numpy"`` (the reference), a name
            registered with ``rewritekit.backends.register``, or a backend object.
        rules: the rewrite rules applied before lowering: a name (``"default"``, the
            standard pipeline), a ``RuleSet``, a rule or a list of rules, or ``None`` (no
            rewriting). ``f.trace`` lists what fired (``rk.explain(f)`` shows it).
        trust_input: skip argument checks (see ``CompiledFunction.trust_input``).
        check_rewrites: debug mode: each call also evaluates every rewrite's original
            and replacement on the call's inputs with the NumPy backend and raises
            ``RewriteMismatch`` naming the rule where they differ beyond the dtype's
            tolerance (a replacement that is finite where the original overflowed or was
            NaN is accepted: that is what stabilization does).

    Raises:
        GraphTypeError: an input is not a graph input, is repeated, or an output needs an
            input that is not listed.

    Example:
        >>> x = rt.vector("x")
        >>> f = function([x], rt.exp(x).sum(), backend="numpy")
        >>> float(f([0.0, 0.0]))
        2.0
    """
    ins = _checked_inputs(inputs)
    single = not isinstance(outputs, (list, tuple))
    outs = [outputs] if single else list(outputs)
    outs = [as_var(o, context=f"function: output {i}") for i, o in enumerate(outs)]
    missing = [v for v in graph_inputs(outs) if v not in set(ins)]
    if missing:
        raise GraphTypeError(
            f"function: the outputs depend on {missing[0]!r}, which is not among the inputs "
            f"({', '.join(repr(v) for v in ins) or 'none'})"
        )
    graph, trace = _rewrite(outs, rules)
    return CompiledFunction(
        ins,
        outs[0] if single else outs,
        graph,
        trace,
        get_backend(backend),
        trust_input,
        check_rewrites,
    )


def _checked_inputs(inputs: Sequence[Var]) -> list[Var]:
    if isinstance(inputs, Var) or not isinstance(inputs, Sequence):
        raise GraphTypeError("function: inputs must be a list of Vars")
    seen: set[Var] = set()
    for position, var in enumerate(inputs):
        if not isinstance(var, Var):
            raise GraphTypeError(
                f"function: input {position} must be a Var, got {type(var).__name__}"
            )
        if var.owner is not None or isinstance(var, Constant):
            raise GraphTypeError(
                f"function: input {position} ({var!r}) is computed by the graph or constant; "
                "inputs must be free variables such as rt.vector('x')"
            )
        if var in seen:
            raise GraphTypeError(f"function: input {var!r} is listed twice")
        seen.add(var)
    return list(inputs)


def _rewrite(outputs: list[Var], rules: Any) -> tuple[list[Var], RewriteTrace]:
    if rules is None:
        graph, trace = rewrite(outputs, rules, trace=True)
    else:  # the rules, then the loop pass (twin scans, unused loop outputs), to a fixpoint
        graph, trace = simplify_loops(outputs, rules, trace=True)
    return list(graph), trace
