"""``rk.function``: rewrite a graph, lower it to a backend, and check the arguments of calls.

Compiles are cached by the graph (see ``function`` and ``docs/performance.md``): a second
``rk.function`` of the same input Vars, output Vars, rules and backend reuses the
rewritten graph and the compiled callable. The cache holds graphs weakly.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from rewritekit.arguments import Signature, checker
from rewritekit.backends import Backend, get_backend
from rewritekit.diagnostics import non_finite_error, rule_makers
from rewritekit.errors import GraphRuntimeError, GraphTypeError, RewriteMismatch
from rewritekit.ir import Apply, Constant, Var, graph_inputs, replace, toposort
from rewritekit.ir.collector import gc_paused
from rewritekit.ir.dot import graph_html
from rewritekit.rules import RewriteTrace
from rewritekit.rules.library import rewrite_for_lowering
from rewritekit.rules.ruleset import as_ruleset

__all__ = ["CompiledFunction", "cache_size", "clear_cache", "function"]


def _finite(value: Any) -> np.ndarray:
    value = np.asarray(value)
    return np.isfinite(value) if value.dtype.kind in "fc" else np.ones(value.shape, bool)


def _term(var: Var) -> str:
    from rewritekit.rules import term_str

    return term_str(var, depth=3)


class _Compiled(NamedTuple):
    """The rewritten graph over ``inputs``, its trace, and the backend's callable. A cache
    entry's is over stand-in inputs of the same types and names (so that it does not keep
    the user's inputs alive), with no trace (see ``_Entry.rewritten``)."""

    inputs: list[Var]
    graph: list[Var]
    trace: RewriteTrace | None
    backend: str
    fn: Callable[..., Any]


class CompiledFunction:
    """A graph compiled for one backend; call it with one value per input.

    ``rk.function`` of a graph compiled before (same inputs, outputs, rules and backend)
    returns a new ``CompiledFunction`` sharing the first one's rewritten graph, trace and
    compiled callable; ``trust_input``, ``check_rewrites`` and ``debug_nans`` stay per
    function.

    A call that fails inside the graph (inputs whose shapes do not broadcast, a failed
    reshape, a singular matrix) raises ``GraphRuntimeError`` naming the node's Op, its
    inputs with their dtypes and shapes, and the rule that made the node if a rewrite did;
    it is also an instance of the backend's exception class (``ValueError``,
    ``np.linalg.LinAlgError``, ...), which it chains.

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
        debug_nans: after every call whose outputs hold NaN or ±inf while its inputs are
            finite, run the graph again node by node with the NumPy reference and raise
            ``NonFiniteError`` naming the first node that made one (a debug mode; the
            check costs a pass over the outputs and inputs per call).
        jitted: the bare ``jax.jit`` callable, for hot loops (JAX backend only).
    """

    def __init__(
        self,
        signature: Signature,
        outputs: Any,
        compiled: _Compiled,
        trust_input: bool,
        check_rewrites: bool = False,
        recall: Callable[[], tuple[list[Var], RewriteTrace]] | None = None,
        debug_nans: bool = False,
    ) -> None:
        self.inputs = signature.flat_inputs
        self.outputs = outputs
        self.signature = signature
        self._single = signature.single
        self._pytrees = signature.in_tree is not None or signature.out_tree is not None
        self._compiled = compiled
        # a cache hit finds its graph and trace (over these inputs) on first use
        self._recall = recall
        self._graph = compiled.graph if recall is None else None
        self._trace = compiled.trace if recall is None else None
        self.backend = compiled.backend
        self.trust_input = trust_input
        self._specs = signature.specs()
        self._check_all = checker(self._specs)
        self._fn = compiled.fn
        self._rewrite_check = check_rewrites
        self._nan_check = debug_nans
        self._debug = check_rewrites or debug_nans  # one test per call for both modes
        self._checker: Any = None
        self._makers: dict[Apply, str] | None = None

    @property
    def check_rewrites(self) -> bool:
        """Whether each call checks every rewrite on its inputs (see the class)."""
        return self._rewrite_check

    @check_rewrites.setter
    def check_rewrites(self, on: bool) -> None:
        self._rewrite_check = on
        self._debug = on or self._nan_check

    @property
    def debug_nans(self) -> bool:
        """Whether each call hunts the node that made a NaN or inf (see the class)."""
        return self._nan_check

    @debug_nans.setter
    def debug_nans(self, on: bool) -> None:
        self._nan_check = on
        self._debug = on or self._rewrite_check

    @property
    def graph(self) -> Var | list[Var]:
        """The output graph(s) that were lowered, after rewriting."""
        if self._graph is None:
            self._graph, self._trace = self._recall()
        return self._graph[0] if self._single else self._graph

    @property
    def trace(self) -> RewriteTrace:
        """What the rewrite did, as (rule, before, after) entries, in order."""
        if self._trace is None:
            self._graph, self._trace = self._recall()
        return self._trace

    def __call__(self, *args: Any) -> Any:
        if self._pytrees:
            args = self.signature.args(args)
        if not self.trust_input:
            try:
                args = self._check_all(*args)
            except TypeError:
                if len(args) != len(self._specs):
                    self.check_arguments(*args)  # raises, naming the inputs
                raise
        if self._debug:
            values = self._debug_call(args)
        else:
            try:
                values = self._fn(*args)
            except GraphRuntimeError as exc:
                self._name_rule(exc)
                raise
        if self._single:
            return values[0]
        values = values if type(values) is list else list(values)
        return self.signature.results(values) if self._pytrees else values

    def _debug_call(self, args: tuple[Any, ...]) -> Any:
        """A call in the debug modes: rewrites checked first, NaNs hunted after."""
        if self._rewrite_check:
            self._check_rewrites(args)
        try:
            values = self._fn(*args)
        except GraphRuntimeError as exc:
            self._name_rule(exc)
            raise
        if self._nan_check:
            graph = [self.graph] if self._single else list(self.graph)
            error = non_finite_error(
                self.inputs, graph, args, values, self._rule_makers, self.backend
            )
            if error is not None:
                raise error
        return values

    def _rule_makers(self) -> dict[Apply, str]:
        """The rule that made each rewritten node (``diagnostics.rule_makers``), once."""
        if self._makers is None:
            self._makers = rule_makers(self.signature.flat_outputs, self.trace)
        return self._makers

    def _name_rule(self, exc: GraphRuntimeError) -> None:
        """Add to ``exc`` the rule that made its node, if a rewrite did."""
        node = getattr(exc, "node", None)
        if node is None or hasattr(exc, "rule"):
            return
        lowered = getattr(exc, "lowered_inputs", None)  # stand-ins, in a cached compile
        if lowered is not None and len(lowered) == len(self.inputs):
            moved = {a: b for a, b in zip(lowered, self.inputs, strict=True) if a is not b}
            if moved:  # the node of f.graph, over the caller's inputs
                node = exc.node = replace(node.outputs[0], moved).owner  # type: ignore[attr-defined]
        rule = self._rule_makers().get(node)
        exc.rule = rule  # type: ignore[attr-defined]
        if rule and exc.args:
            exc.args = (f"{exc.args[0]}\n  made by rule {rule!r}", *exc.args[1:])

    def _check_rewrites(self, args: tuple[Any, ...]) -> None:
        """Evaluate every (before, after) pair of the trace on ``args`` with NumPy."""
        from rewritekit.backends.numpy import NUMPY_BACKEND
        from rewritekit.testing import rule_tolerance

        # a rewrite inside a loop body or branch reads the inner graph's placeholders, whose
        # per-step values a call does not expose: it is listed in the trace, not checked here
        entries = [entry for entry in self.trace if not entry.where]
        if not entries:
            return
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
        """The pure, un-jitted JAX function of positional arrays (JAX backend only).

        It cannot raise on a value: an indexing node in mode "raise" (``x[i]``) reads as
        mode "fill" in it (an index out of bounds reads NaN, or the dtype's fill value,
        and an update out of bounds is dropped), where calling ``f`` raises
        ``GraphIndexError``.
        """
        fn = getattr(self._fn, "jax_fn", None)
        if fn is None:
            raise AttributeError(f"jax_fn exists only for the jax backend, not {self.backend!r}")
        if not self._single:
            return fn
        return lambda *args: fn(*args)[0]

    @property
    def jitted(self) -> Any:
        """The bare ``jax.jit`` callable (JAX backend only), for hot loops.

        It skips ``rk.function``'s argument checks, its index checks (as ``jax_fn``, an
        index out of bounds reads as mode "fill") and its 64-bit switch: pass JAX or NumPy
        arrays of exactly the inputs' dtypes and shapes. It returns the list of outputs
        (a one-element list for a function of one output). A graph with 64-bit dtypes
        needs 64-bit JAX where it is called (``jax.config.update("jax_enable_x64", True)``,
        or inside ``with jax.enable_x64(True):``), else JAX would trace it anew in 32 bits;
        so reading ``f.jitted`` raises where 64-bit JAX is off and the graph needs it.

        Example:
            >>> with jax.enable_x64(True):
            ...     step = f.jitted
            ...     for _ in range(1000):
            ...         (y,) = step(x)
        """
        make_jitted = getattr(self._fn, "jitted", None)
        if make_jitted is None:
            raise AttributeError(f"jitted exists only for the jax backend, not {self.backend!r}")
        import jax

        if not jax.enable_x64.value and _needs_64_bit(self._compiled):
            raise RuntimeError(
                "jitted: this graph has 64-bit dtypes and 64-bit JAX is off, so JAX would "
                "compute it in 32 bits; read and call f.jitted inside "
                "`with jax.enable_x64(True):`, or call f itself"
            )
        return make_jitted()

    def __repr__(self) -> str:
        names = ", ".join(v.name or "<unnamed>" for v in self.inputs)
        return f"<CompiledFunction ({names}) backend={self.backend!r}>"

    def _repr_html_(self) -> str:
        """Jupyter's view: a picture of the rewritten graph (its text tree without
        Graphviz)."""
        graph = self.graph
        return graph_html(graph if isinstance(graph, list) else [graph])


@gc_paused
def function(
    inputs: Sequence[Var],
    outputs: Any,
    *,
    backend: str | Backend = "jax",
    rules: Any = "default",
    trust_input: bool = False,
    check_rewrites: bool = False,
    debug_nans: bool = False,
    cache: bool = True,
    roll: bool = True,
    in_shardings: Any = None,
    out_shardings: Any = None,
    donate_argnums: int | Sequence[int] = (),
) -> CompiledFunction:
    """Compile the graph from ``inputs`` to ``outputs`` into a callable.

    Compiles are cached by the graph: called again with the same input Vars (same
    objects, same order), the same output Vars (graphs are hash-consed, so rebuilding an
    expression over the same inputs gives the same objects), the same ``rules`` and the
    same backend, ``function`` returns a new ``CompiledFunction`` that shares the first
    one's rewritten graph, trace and compiled callable, in well under a millisecond and
    with no XLA work. ``rules`` match by name for a string, and by their rules (the same
    ``Rule`` objects in the same order) for a ``RuleSet``, a rule or a list. The cache
    holds graphs weakly: once one of an entry's input or output Vars is freed, the entry
    goes. Functions of no inputs are not cached. ``clear_cache()`` empties it; see
    ``docs/performance.md``.

    Args:
        inputs: the graph inputs, in call order, each a Var or a pytree of Vars (nested
            tuples, lists, dicts, named tuples and ``None``, as ``jax.jit`` takes them):
            the call then takes the same structure at that position. Inputs the outputs do
            not use are allowed.
        outputs: one Var (the call returns one array), a list/tuple of them (it returns a
            list), or any pytree of Vars and ``None`` (it returns the same structure).
            Outputs may be inputs or constants; non-Var values become constants.
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
        debug_nans: debug mode: after each call whose outputs hold NaN or ±inf while all
            its inputs are finite, run the graph again node by node with the NumPy
            reference (then, for JAX, with the JAX implementations) and raise
            ``NonFiniteError`` naming the first node that made one from finite inputs: its
            Op, its inputs with their shapes and ranges, and the rule that made it. Off
            (the default), a call pays nothing for it. Under ``f.jax_fn`` in your own JAX
            code, use ``jax.debug_nans(True)`` instead. See ``docs/reliability.md``.
        cache: look the graph up in the compile cache, and store it there (default);
            ``False`` compiles anew and leaves the cache alone.
        roll: with rules, roll chains of at least 8 structurally equal steps (an
            unrolled Python loop, and its gradient) into scans, which XLA compiles in
            time independent of the number of steps (``loops.roll_chain`` in the trace;
            ``docs/performance.md``). ``False`` keeps them unrolled.
        in_shardings: passed to ``jax.jit`` (JAX backend only): one sharding for every
            input or one per input, ``None`` for JAX's choice. With pytrees, as
            ``jax.jit``: a sharding per argument stands for its whole subtree, or follows
            its structure. See ``docs/scaling.md``.
        out_shardings: the same for the outputs.
        donate_argnums: passed to ``jax.jit`` (JAX backend only): the positions of inputs
            whose buffers the call may reuse; a donated pytree argument donates every leaf.

    Raises:
        GraphTypeError: an input is not a graph input, is repeated, or an output needs an
            input that is not listed.

    A call raises ``GraphRuntimeError`` where a node fails (see ``CompiledFunction``).

    Example:
        >>> x = rt.vector("x")
        >>> f = function([x], rt.exp(x).sum(), backend="numpy")
        >>> float(f([0.0, 0.0]))
        2.0
    """
    signature = Signature(inputs, outputs)
    ins = _checked_inputs(signature)
    outs = signature.flat_outputs
    in_shardings = signature.per_leaf(in_shardings, "in")
    out_shardings = signature.per_leaf(out_shardings, "out")
    donate_argnums = signature.donated(donate_argnums)
    found = get_backend(backend)
    options = _jit_options(found, ins, outs, in_shardings, out_shardings, donate_argnums)
    key = _key(ins, outs, rules, found, roll, options) if cache and ins else None
    entry = _CACHE.get(key) if key is not None else None
    if signature.single:
        outputs = outs[0]
    elif signature.out_tree is None:
        outputs = outs
    if key is not None and (entry is None or not entry.alive(ins, outs)):
        with _compiling(key):  # one thread compiles a graph; the others wait for its entry
            entry = _CACHE.get(key)
            if entry is None or not entry.alive(ins, outs):
                compiled = _compile(ins, outs, rules, found, key, roll, options)
                return CompiledFunction(
                    signature, outputs, compiled, trust_input, check_rewrites, None, debug_nans
                )
    if entry is not None:
        recall = functools.partial(entry.rewritten, outs)
        return CompiledFunction(
            signature, outputs, entry.compiled, trust_input, check_rewrites, recall, debug_nans
        )
    compiled = _compile(ins, outs, rules, found, key, roll, options)
    return CompiledFunction(
        signature, outputs, compiled, trust_input, check_rewrites, None, debug_nans
    )


def _jit_options(
    backend: Backend,
    ins: list[Var],
    outs: list[Var],
    in_shardings: Any,
    out_shardings: Any,
    donate_argnums: Any,
) -> dict[str, Any]:
    """The ``jax.jit`` options given, checked: an error names the option a non-JAX backend
    cannot take, or the count that does not match the inputs or outputs."""
    donate = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
    given = {
        name: value
        for name, value in (("in_shardings", in_shardings), ("out_shardings", out_shardings))
        if value is not None
    }
    if donate:
        given["donate_argnums"] = donate
    if not given:
        return {}
    if backend.name != "jax":
        raise GraphTypeError(
            f"function: the {backend.name!r} backend does not take "
            f"{', '.join(sorted(given))} (jax.jit options: JAX backend only)"
        )
    for name, count in (("in_shardings", len(ins)), ("out_shardings", len(outs))):
        value = given.get(name)
        if isinstance(value, (list, tuple)) and len(value) != count:
            raise GraphTypeError(
                f"function: {name} has {len(value)} entries for {count} {name.split('_')[0]}puts"
            )
        if isinstance(value, list):
            given[name] = tuple(value)  # hashable: part of the cache key
    for position in donate:
        if not 0 <= position < len(ins):
            raise GraphTypeError(f"function: donate_argnums {position} is not an input position")
    return given


def _compile(
    ins: list[Var],
    outs: list[Var],
    rules: Any,
    backend: Backend,
    key: tuple[Any, ...] | None,
    roll: bool = True,
    options: dict[str, Any] | None = None,
) -> _Compiled:
    """Check, rewrite and lower the graph; store it in the cache under ``key`` if given."""
    known = set(ins)
    missing = [] if _reads_only(outs, known) else [v for v in graph_inputs(outs) if v not in known]
    if missing:
        raise GraphTypeError(
            f"function: the outputs depend on {missing[0]!r}, which is not among the inputs "
            f"({', '.join(repr(v) for v in ins) or 'none'})"
        )
    graph, trace = rewrite_for_lowering(outs, rules, roll)
    extra = options or {}
    if key is None:
        fn = backend.compile(ins, graph, **extra)
        return _Compiled(ins, graph, trace, backend.name, fn)
    stand_ins = [Var(v.type, v.name) for v in ins]
    graph_s = replace(graph, dict(zip(ins, stand_ins, strict=True)))
    fn = backend.compile(stand_ins, graph_s, **extra)
    compiled = _Compiled(ins, graph, trace, backend.name, fn)
    _CACHE[key] = _Entry(key, ins, outs, backend, compiled, stand_ins, graph_s)
    return compiled


def _reads_only(outputs: list[Var], known: set[Var]) -> bool:
    """Whether every graph input the outputs read is in ``known``: the quick check, over
    the nodes (``graph_inputs`` walks every Var, in order, to name a missing one)."""
    reads = [*outputs, *[v for node in toposort(outputs) for v in node.inputs]]
    return all(v.owner is not None or v in known or isinstance(v, Constant) for v in reads)


def _checked_inputs(signature: Signature) -> list[Var]:
    seen: set[Var] = set()
    for position, (var, path) in enumerate(
        zip(signature.flat_inputs, signature.paths, strict=True)
    ):
        where = f"input {path}" if path else f"input {position}"
        if not isinstance(var, Var):
            raise GraphTypeError(f"function: {where} must be a Var, got {type(var).__name__}")
        if var.owner is not None or isinstance(var, Constant):
            raise GraphTypeError(
                f"function: {where} ({var!r}) is computed by the graph or constant; "
                "inputs must be free variables such as rt.vector('x')"
            )
        if var in seen:
            raise GraphTypeError(f"function: input {var!r} is listed twice")
        seen.add(var)
    return list(signature.flat_inputs)


# --- the compile cache -------------------------------------------------------------------
#
# An entry maps (input ids, output ids, rules key, backend id) to a ``_Compiled`` built over
# stand-in inputs, so nothing in it refers to the user's inputs: it holds them (and the
# outputs) through weak references whose callbacks drop the entry, and the first compile's
# graph and trace weakly too. Python has no ephemerons, so an entry that held the graph
# itself would keep it alive forever. Once the user drops the inputs or outputs, the entry
# goes; the stand-in graph and the compiled callable go with it unless a CompiledFunction
# still uses them.


class _Entry:
    __slots__ = ("compiled", "first", "holds", "refs", "roll", "rules")

    def __init__(
        self,
        key: tuple[Any, ...],
        ins: list[Var],
        outs: list[Var],
        backend: Backend,
        first: _Compiled,
        stand_ins: list[Var],
        graph: list[Var],
    ) -> None:
        forget = _forgetter(key)
        self.refs = [weakref.ref(v, forget) for v in [*ins, *outs]]
        self.holds = backend  # alive while the entry is: its id in the key is not reused
        self.rules, self.roll = key[2], key[4]
        self.compiled = _Compiled(stand_ins, graph, None, first.backend, first.fn)
        self.first = [weakref.ref(first.trace), *[weakref.ref(v) for v in first.graph]]

    def alive(self, ins: list[Var], outs: list[Var]) -> bool:
        """Whether the entry's Vars are these (a guard; a freed Var drops its entry)."""
        return all(ref() is v for ref, v in zip(self.refs, [*ins, *outs], strict=True))

    def rewritten(self, outs: list[Var]) -> tuple[list[Var], RewriteTrace]:
        """The rewritten graph and trace of ``outs``: the first compile's while they live,
        else the rewrite run again (no lowering, no XLA; hash-consing gives the same
        nodes). The entry keeps no trace: its terms would hold the user's inputs."""
        trace, *graph = [ref() for ref in self.first]
        if trace is None or any(v is None for v in graph):
            return rewrite_for_lowering(outs, self.rules, self.roll)
        return graph, trace


_CACHE: dict[tuple[Any, ...], _Entry] = {}
_COMPILING: dict[tuple[Any, ...], list[Any]] = {}  # key -> [its lock, threads using it]
_COMPILING_LOCK = threading.Lock()


@contextlib.contextmanager
def _compiling(key: tuple[Any, ...]) -> Iterator[None]:
    """Hold the lock of ``key`` (made on first use, dropped by its last user), so that
    threads compiling the same graph at once compile it once. Cache hits take no lock."""
    with _COMPILING_LOCK:
        held = _COMPILING.setdefault(key, [threading.RLock(), 0])
        held[1] += 1
    try:
        with held[0]:
            yield
    finally:
        with _COMPILING_LOCK:
            held[1] -= 1
            if not held[1]:
                del _COMPILING[key]


def _forgetter(key: tuple[Any, ...]) -> Callable[[Any], None]:
    # the dict itself, not the module global: at interpreter exit the globals are None
    # before the last graphs are collected and these callbacks run
    cache = _CACHE
    return lambda _ref: cache.pop(key, None)


def _key(
    ins: list[Var],
    outs: list[Var],
    rules: Any,
    backend: Backend,
    roll: bool,
    options: dict[str, Any] | None = None,
) -> tuple[Any, ...] | None:
    """The cache key: Vars and the backend by identity; rules by name, or by their rules
    (``Rule`` objects hash by identity) for a RuleSet, a rule or a list of them; ``roll``;
    the ``jax.jit`` options (None, not cached, where they cannot be hashed)."""
    if rules is None or isinstance(rules, str):
        rules_key: Any = rules
    else:
        rules_key = as_ruleset(rules).rules
    extra = tuple(sorted((options or {}).items()))
    try:
        hash(extra)
    except TypeError:
        return None
    key = (tuple(map(id, ins)), tuple(map(id, outs)), rules_key, id(backend), bool(roll))
    return (*key, extra) if extra else key


def _needs_64_bit(compiled: _Compiled) -> bool:
    """Whether an input, output or intermediate of the lowered graph is 64-bit."""
    wide = {"int64", "uint64", "float64", "complex128"}
    nodes = [out for node in toposort(compiled.graph) for out in node.outputs]
    return any(v.dtype in wide for v in [*compiled.inputs, *compiled.graph, *nodes])


def clear_cache() -> None:
    """Empty the compile cache of ``rk.function`` (functions already made keep working).

    Example:
        >>> clear_cache()
        >>> cache_size()
        0
    """
    _CACHE.clear()


def cache_size() -> int:
    """How many compiled graphs the compile cache of ``rk.function`` holds."""
    return len(_CACHE)
