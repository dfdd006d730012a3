"""The differential property: a graph gives the same results on every backend, rewritten or
not, or fails with a rewritekit error everywhere.

``check(graph)`` compiles the graph four ways (NumPy and JAX, ``rules=None`` and
``rules="default"``), calls each on the graph's argument sets and compares:

- NumPy vs JAX, unrewritten and rewritten: the same dtype and shape; integer and bool
  results exactly; floats to the dtype's tolerance, NaN where NaN, infinities of the same
  sign (values below the smallest normal count as zero: XLA on CPU flushes subnormals).
  JAX may be finite where NumPy overflowed or gave NaN: XLA's algebraic simplifier folds
  ``log(exp(x))`` to ``x`` and ``float(b) * y`` (b boolean) to ``where(b, y, 0)``;
- rewritten vs unrewritten (NumPy): the same (but for the known cases below), and a
  rewritten graph may return where the unrewritten one raised (a rewrite may drop a
  computation that fails but whose value is not needed: ``x[i] == x[i]`` is ``True`` for
  integers, whatever ``i``);
- or both raise an ``rk.RewritekitError``: any other exception is a problem, and so is
  one side raising where the other returns.

Floats compare to float32's tolerance wherever a float32 value was computed on the way to
them. A backend disagreement is *known*, not a problem, where the unrewritten graph computes
a subnormal on the way to that output (XLA on CPU flushes them to zero, so a function of
one, gammainc(5e-309, 5e-309) say, differs from NumPy's). A rewrite's disagreement is
known where the unrewritten graph computes a NaN or an infinity on the way to that output
(checked by running every float node of it on NumPy: a rewrite may turn a NaN or an
overflow into the exact value, as ``check_rewrites`` allows, and what is computed from it
then differs too), or where the rewritten graph agrees without the rules tagged
``shape_unsafe`` (they assume a kept operand has the result's shape).

An index out of bounds must make both unrewritten backends raise (``rk.GraphIndexError``,
or the error of a node that failed before it) once index checks are in the library
(``index_checks()``); before that, a disagreement on a graph whose out-of-bounds index
reaches an output is counted as known, not as a problem.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.ir import Var
from tests.fuzz.graphs import Graph

__all__ = ["TOLERANCE", "VARIANTS", "Verdict", "check", "compare_values", "index_checks"]

# rtol, atol per float dtype: looser than the op records' (one Op), since errors of a few
# ulps in transcendental functions grow through a chain of Ops
TOLERANCE = {"float64": (1e-7, 1e-12), "float32": (2e-3, 1e-6)}
VARIANTS = (("numpy", None), ("numpy", "default"), ("jax", None), ("jax", "default"))
# (reference, other, what differs)
PAIRS = (
    (("numpy", None), ("jax", None), "backend"),
    (("numpy", "default"), ("jax", "default"), "backend"),
    (("numpy", None), ("numpy", "default"), "rewrite"),
)


@dataclass
class Outcome:
    """One compiled variant called on one argument set: the values, or the error."""

    values: list[np.ndarray] | None = None
    error: BaseException | None = None

    def __str__(self) -> str:
        if self.error is not None:
            return f"raised {type(self.error).__name__}: {str(self.error).splitlines()[0][:200]}"
        return "returned " + ", ".join(_short(v) for v in self.values or [])


@dataclass
class Verdict:
    """What ``check`` found: problems (disagreements, each a bug or a decision to make) and
    known disagreements (see the module docstring)."""

    problems: list[str] = field(default_factory=list)
    known: list[str] = field(default_factory=list)


def _short(value: np.ndarray) -> str:
    text = np.array2string(np.asarray(value), threshold=12, max_line_width=200)
    return f"{value.dtype.name}{list(value.shape)} {text}"


@functools.cache
def index_checks() -> bool:
    """Whether both backends raise ``rk.GraphIndexError`` for an index out of bounds."""
    x = rt.vector("x")
    for backend in ("numpy", "jax"):
        f = rk.function([x], x[3], backend=backend, rules=None, cache=False)
        try:
            f(np.zeros(2))
        except rk.GraphIndexError:
            continue
        except Exception:
            return False
        return False
    return True


def _run(graph: Graph, backend: str, rules: Any) -> list[Outcome]:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            f = rk.function(graph.inputs, list(graph.outputs), backend=backend, rules=rules)
        except Exception as exc:
            return [Outcome(error=exc) for _ in graph.arguments]
        outcomes = []
        for arguments in graph.arguments:
            try:
                values = [np.asarray(v) for v in f(*arguments)]
            except Exception as exc:
                outcomes.append(Outcome(error=exc))
            else:
                outcomes.append(Outcome(values=values))
        return outcomes


def _flushed(value: np.ndarray) -> np.ndarray:
    """``value`` with subnormals set to zero (of their sign)."""
    if value.dtype.kind != "f" or not value.size:
        return value
    tiny = np.finfo(value.dtype).tiny
    with np.errstate(all="ignore"):
        return np.where(np.abs(value) < tiny, value * 0, value)


def compare_values(
    expected: np.ndarray, actual: np.ndarray, what: str = "", loose: bool = False
) -> str | None:
    """Why ``actual`` differs from ``expected``, or None. ``what``: "backend" lets
    ``actual`` be finite where ``expected`` is not (see the module docstring); ``loose``:
    compare floats to float32's tolerance (a float32 value was computed on the way)."""
    if expected.dtype != actual.dtype:
        return f"dtype {actual.dtype.name} != {expected.dtype.name}"
    if expected.shape != actual.shape:
        return f"shape {actual.shape} != {expected.shape}"
    if expected.dtype.kind != "f":
        bad = expected != actual
    else:
        expected, actual = _flushed(expected), _flushed(actual)
        rtol, atol = TOLERANCE["float32" if loose else expected.dtype.name]
        finite = np.isfinite(expected) & np.isfinite(actual)
        with np.errstate(all="ignore"):
            close = np.isclose(expected, actual, rtol=rtol, atol=atol)
        same_special = (np.isnan(expected) & np.isnan(actual)) | (
            np.isinf(expected) & (expected == actual)
        )
        bad = ~np.where(finite, close, same_special)
        if what == "backend":
            bad &= ~(~np.isfinite(expected) & np.isfinite(actual))
    if not bad.any():
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    return (
        f"element {where}: {np.asarray(actual)[where]!r} != {np.asarray(expected)[where]!r} "
        f"({int(bad.sum())} of {bad.size} differ)"
    )


def _loose(output: Var) -> bool:
    return any(v.dtype in ("float32", "complex64") for v in rk.ancestors(output))


def _compare(graph: Graph, ref: Outcome, other: Outcome, what: str) -> tuple[int, str] | None:
    """Where and why ``other`` differs from ``ref``: (the output, or -1, and a message)."""
    errors = [o.error for o in (ref, other) if o.error is not None]
    for error in errors:
        if not isinstance(error, rk.RewritekitError):
            return -1, f"a non-rewritekit error: {type(error).__name__}: {error}"
    if len(errors) == 2 or (what == "rewrite" and ref.error is not None):
        return None
    if errors:
        return -1, "one raised, the other returned"
    assert ref.values is not None and other.values is not None
    for position, (e, a) in enumerate(zip(ref.values, other.values, strict=True)):
        why = compare_values(e, a, what, _loose(graph.outputs[position]))
        if why is not None:
            return position, f"output {position}: {why}"
    return None


def _upstream(graph: Graph, output: int, number: int) -> list[np.ndarray]:
    """The values of the float nodes (inputs included) on the way to ``output`` in the
    unrewritten graph, on argument set ``number`` (NumPy backend; none if it raises)."""
    upstream = [v for v in rk.ancestors(graph.outputs[output]) if v.dtype in _FLOATS]
    if not upstream:
        return []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        f = rk.function(graph.inputs, upstream, backend="numpy", rules=None, cache=False)
        try:
            return [np.asarray(v) for v in f(*graph.arguments[number])]
        except rk.RewritekitError:
            return []


def _non_finite(values: list[np.ndarray]) -> bool:
    return not all(np.isfinite(v).all() for v in values)


def _subnormal(values: list[np.ndarray]) -> bool:
    return any(((v != 0) & (np.abs(v) < np.finfo(v.dtype).tiny)).any() for v in values if v.size)


_FLOATS = ("float16", "float32", "float64", "complex64", "complex128")


def _shape_unsafe(graph: Graph, ref: Outcome, number: int) -> bool:
    """Whether the rewritten graph agrees with ``ref`` without the rules tagged
    ``shape_unsafe`` (``docs/rules-library.md``): they may change a result's shape where a
    dropped operand broadcast an axis of unknown length 1."""
    safe = rk.rules.default.excluding("shape_unsafe")
    outcome = _run(graph, "numpy", safe)[number]
    return _compare(graph, ref, outcome, "rewrite") is None


def _excuse(graph: Graph, ref: Outcome, output: int, number: int, what: str) -> str | None:
    """Why this disagreement is a known one, or None (see the module docstring)."""
    values = _upstream(graph, output, number) if output >= 0 else []
    if what == "backend":
        if _subnormal(values):
            return "a subnormal on the way (XLA flushes subnormals to zero)"
        return None
    if _non_finite(values):
        return "the unrewritten graph computes a NaN or an infinity on the way"
    if _shape_unsafe(graph, ref, number):
        return "a shape_unsafe rule"
    return None


def check(graph: Graph) -> Verdict:
    """Compile ``graph`` four ways, call each on its argument sets, and compare (see the
    module docstring)."""
    verdict = Verdict()
    verdict.problems.extend(f"construction: {why}" for why in graph.refused)
    outcomes = {variant: _run(graph, *variant) for variant in VARIANTS}
    checked = index_checks()
    for ref_variant, other_variant, what in PAIRS:
        for number, (ref, other) in enumerate(
            zip(outcomes[ref_variant], outcomes[other_variant], strict=True)
        ):
            found = _compare(graph, ref, other, what)
            if found is None:
                continue
            output, why = found
            line = (
                f"{what}: {_label(other_variant)} vs {_label(ref_variant)}, argument set "
                f"{number}: {why}\n  {_label(ref_variant)} {ref}\n  {_label(other_variant)} "
                f"{other}"
            )
            excuse = _excuse(graph, ref, output, number, what)
            if excuse is not None:
                verdict.known.append(f"{line}\n  known: {excuse}")
            elif graph.out_of_bounds and not checked:
                verdict.known.append(line)
            else:
                verdict.problems.append(line)
    if graph.out_of_bounds and checked:  # unrewritten: a rewrite may drop the failing read
        for variant in (("numpy", None), ("jax", None)):
            for number, outcome in enumerate(outcomes[variant]):
                if not isinstance(outcome.error, rk.RewritekitError):
                    verdict.problems.append(
                        f"index out of bounds: {_label(variant)}, argument set {number}, "
                        f"{outcome} instead of raising GraphIndexError"
                    )
    return verdict


def _label(variant: tuple[str, Any]) -> str:
    backend, rules = variant
    return f"{backend}/rules={rules}"


def report(graph: Graph, verdict: Verdict) -> str:
    """A failure message: the problems, then the graph and its arguments."""
    return "\n".join([*verdict.problems, "", graph.describe()])
