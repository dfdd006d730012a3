"""The rewritekit showcase: ``python -m rewritekit.demo`` (or ``make demo``).

It shows the persistent graph IR (hash-consing, sharing, ``replace``, ``dprint``) and
compiles one graph with both backends, the NumPy reference and JAX (``jax.jit``/XLA), and
differentiates it symbolically, rewrites a graph with declarative rules (with the trace of
what fired), lets the standard rule library make a naively written loss exact where
plain JAX overflows, builds a probabilistic model (eight schools) with explicit random
keys, its log-density and gradient, and runs a GARCH(1,1) log-likelihood as one ``scan``
node whatever the length of the series.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

import rewritekit as rk
import rewritekit.tensor as rt


def main(picture_dir: Path | None = None) -> None:
    """Build a small graph, print it, and show what the IR guarantees; end with a picture
    of a rewrite in ``picture_dir`` (the current directory by default)."""
    x = rt.vector("x")
    s = rt.scalar("s")
    y = rt.log(1.0 + rt.exp(x) * s) + rt.exp(x) / s

    print("A graph: y = log(1 + exp(x) * s) + exp(x) / s")
    print(rk.dprint(y))
    print()
    print("Hash-consing: the same expression is the same object")
    print(f"  rt.exp(x) is rt.exp(x)          -> {rt.exp(x) is rt.exp(x)}")
    print(f"  nodes in y's graph              -> {len(rk.toposort(y))} (exp(x) counted once)")
    print()

    exp_t = rt.exp(rt.scalar("t"))
    before = rk.intern_stats().applies_created
    y2 = rk.replace(y, {s: exp_t})
    made = rk.intern_stats().applies_created - before
    print("replace(y, {s: exp(t)}) rebuilds only the paths through s:")
    print(rk.dprint(y2))
    print(f"  new Apply nodes created: {made} (the ones reading s); exp(x) is shared")
    print()

    x32 = rt.vector("x32", dtype="float32")
    print("Python scalars are weak (NumPy 2 promotion):")
    print(f"  float32 x * 5.0 -> {(x32 * 5.0).type}")
    print(f"  rt.log(5.0)     -> {rt.log(5.0).type}")
    print()

    print("Bad graphs fail at construction, naming the Op and the inputs:")
    try:
        rt.vector("a", shape=(3,)) + rt.vector("b", shape=(4,))
    except rk.BroadcastError as exc:
        print(f"  BroadcastError: {exc}")
    print()

    restored = pickle.loads(pickle.dumps(y))
    print(f"Pickle round trip keeps the structure: {rk.dprint(restored) == rk.dprint(y)}")
    print()
    compile_and_run()
    print()
    rewrite_with_rules()
    print()
    standard_library()
    print()
    probabilistic_model()
    print()
    time_series_loop()
    print()
    unrolled_loop()
    print()
    picture(Path.cwd() if picture_dir is None else picture_dir)


def compile_and_run() -> None:
    """Compile a small model with both backends and compare the results."""
    w = rt.vector("w")
    X = rt.matrix("X")
    t = rt.vector("t")
    logits = X @ w
    loss = (rt.softplus(logits) - t * logits).mean()  # logistic-regression loss
    probabilities = rt.sigmoid(logits)
    rng = np.random.default_rng(0)
    data = (rng.standard_normal(3), rng.standard_normal((5, 3)), rng.integers(0, 2, 5) * 1.0)

    reference = rk.function([w, X, t], [loss, probabilities], backend="numpy")
    compiled = rk.function([w, X, t], [loss, probabilities], backend="jax")
    print("A logistic-regression loss, compiled twice:")
    for name, f in [("numpy", reference), ("jax  ", compiled)]:
        value, probs = f(*data)
        print(f"  {name}: loss = {float(value):.15f}, p = {np.round(np.asarray(probs), 4)}")
    same = np.allclose(reference(*data)[0], np.asarray(compiled(*data)[0]), rtol=1e-12)
    print(f"  the backends agree to 1e-12: {same}; JAX result type {type(compiled(*data)[0])}")

    import jax

    grad_w = rk.grad(loss, w)  # symbolic: more graph, compiled like any other
    symbolic = np.asarray(rk.function([w, X, t], grad_w)(*data))
    loss_fn = rk.function([w, X, t], loss)
    with jax.enable_x64(True):
        automatic = np.asarray(jax.grad(loss_fn.jax_fn)(*data))
    print(f"  rk.grad(loss, w) = {np.round(symbolic, 6)}")
    print(
        f"  agrees with jax.grad of the compiled loss to 1e-12: "
        f"{np.allclose(symbolic, automatic, rtol=1e-12, atol=0)}"
    )


def rewrite_with_rules() -> None:
    """Stabilise two expressions with rules written as the math, and show the trace."""
    from rewritekit.rules import RuleSet, lvar, rule

    a = lvar("a")
    stabilize = RuleSet(
        [
            rule(rt.log(1 + a), rt.log1p(a), name="log1p"),
            rule(rt.exp(a) - 1, rt.expm1(a), name="expm1"),
            rule(rt.log1p(rt.exp(a)), rt.softplus(a), name="softplus"),
        ],
        name="stabilize",
    )
    x = rt.vector("x")
    ys = [rt.log(1 + (rt.exp(x) - 1)), rt.log(rt.exp(x) + 1)]
    print("Rules read like the math: rule(rt.log(1 + a), rt.log1p(a), name='log1p'), ...")
    f = rk.function([x], ys, rules=stabilize, backend="numpy")
    raw = rk.function([x], ys, rules=None, backend="numpy")
    print("[log(1 + (exp(x) - 1)), log(exp(x) + 1)] rewrites to")
    print(rk.dprint(f.graph))
    print("What fired (rk.explain(f)); a replacement is rewritten in turn:")
    print("  " + rk.explain(f).replace("\n", "\n  "))
    values = np.array([1e-20, 800.0])
    for name, fn in [("rewritten ", f), ("as written", raw)]:
        first, second = fn(values)
        print(f"  {name}: at x = 1e-20: {first[0]:.3g};  at x = 800: {second[1]:.6g}")


def standard_library() -> None:
    """A cross-entropy written from the textbook, made exact by the default pipeline."""
    w, X, t = rt.vector("w"), rt.matrix("X"), rt.vector("t")
    p = rt.sigmoid(X @ w)
    loss = -rt.mean(t * rt.log(p) + (1 - t) * rt.log(1 - p))  # as in the textbook
    grad_w = rk.grad(loss, w)
    stable = rk.function([w, X, t], [loss, grad_w])  # rules="default", JAX backend
    naive = rk.function([w, X, t], [loss, rk.grad(loss, w, stabilize=False)], rules=None)
    print("The standard library (rules='default'), on a textbook cross-entropy:")
    print("  loss = -mean(t*log(sigmoid(X@w)) + (1-t)*log(1-sigmoid(X@w)))")
    fired = stable.trace.fired()
    print(f"  {sum(fired.values())} rewrites; the stabilizing ones:")
    for name in sorted(n for n in fired if n.startswith("stabilize.")):
        print(f"    {name}")
    data = (
        np.array([40.0, -40.0]),
        np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 1.0]]),
        np.array([0.0, 1.0, 1.0]),
    )  # confident and wrong on the first example
    exact = np.logaddexp(0.0, [40.0, 40.0, 80.0]).mean()  # softplus of each -/+ logit
    for name, f in [("default   ", stable), ("rules=None", naive)]:
        with np.errstate(all="ignore"):
            value, g = f(*data)
        print(f"  {name}: loss = {float(value):.12g}, grad = {np.round(np.asarray(g), 6)}")
    print(f"  exact loss: {exact:.12g}")


def probabilistic_model() -> None:
    """Eight schools: forward sampling with explicit keys, then its log-density."""
    import rewritekit.logprob as rl
    import rewritekit.random as rr

    sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    y_obs = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    key = rr.key("key")
    k, mu = rr.normal(key, 0.0, 5.0)
    k, tau = rr.halfcauchy(k, 5.0)
    k, theta_tilde = rr.normal(k, 0.0, 1.0, size=(8,))
    k, y = rr.normal(k, mu + tau * theta_tilde, sigma)
    sample = rk.function([key], [k, mu, tau])
    next_key, *first = sample(rr.seed(0))
    again, fresh = sample(rr.seed(0))[1:], sample(next_key)[1:]
    print("Eight schools, mu ~ N(0, 5), tau ~ HalfCauchy(5), y ~ N(mu + tau*theta~, sigma):")
    print(f"  draw (mu, tau) with rr.seed(0): {np.round(np.asarray(first, dtype=float), 4)}")
    print(
        f"  the same key again gives the same draw: {np.allclose(first, again)}; "
        f"the returned key a fresh one: {np.round(np.asarray(fresh, dtype=float), 4)}"
    )
    values = {mu: rt.scalar("mu"), tau: rt.scalar("tau"), y: y_obs}
    values[theta_tilde] = rt.tensor("theta_tilde", shape=(8,))
    logp = rl.joint_logprob(values, transforms="default")  # tau's value is log(tau)
    packing = rl.flatten_values([values[mu], values[tau], values[theta_tilde]])
    flat_logp = packing.substitute(logp)
    f = rk.function([packing.flat], [flat_logp, rk.grad(flat_logp, packing.flat)])
    value, gradient = f(packing.pack({"mu": 4.4, "tau": np.log(3.6), "theta_tilde": np.zeros(8)}))
    print(f"  logp terms: {list(rl.logprob_terms(values, transforms='default'))}")
    print(
        f"  logp at mu=4.4, tau=3.6, theta~=0: {float(value):.6f}; d/dmu = {float(gradient[0]):.6f}"
    )
    logit = rt.scalar("logit")
    _, coin = rr.bernoulli(k, logit=logit)
    lp = rl.joint_logprob({coin: 0})
    flip = rk.function([logit], [lp, rk.grad(lp, logit)])
    print(f"  Bernoulli(logit=800) at 0: logp, d/dlogit = {[float(v) for v in flip(800.0)]}")


def time_series_loop() -> None:
    """GARCH(1,1): a recurrence as one scan node; its gradient is a reverse scan."""
    import time

    y = rt.vector("y")
    mu, a0, a1, b1 = (rt.scalar(n) for n in ("mu", "a0", "a1", "b1"))

    def step(s: rk.Var, pair: tuple[rk.Var, rk.Var]) -> tuple[rk.Var, rk.Var]:
        y_prev, y_now = pair
        s = rt.sqrt(a0 + a1 * (y_prev - mu) ** 2 + b1 * s**2)
        return s, -0.5 * ((y_now - mu) / s) ** 2 - rt.log(s) - 0.5 * np.log(2 * np.pi)

    _, terms = rk.scan(step, rt.std(y), (y[:-1], y[1:]))
    loglik = rt.sum(terms)
    start = time.perf_counter()
    f = rk.function([y, mu, a0, a1, b1], [loglik, *rk.grad(loglik, [mu, a0, a1, b1])])
    built = time.perf_counter() - start
    series = np.random.default_rng(0).normal(0.0, 0.3, size=10_000)
    value, *grads = f(series, 0.0, 0.01, 0.1, 0.8)
    s, reference = series.std(), 0.0
    for y_prev, y_now in zip(series[:-1].tolist(), series[1:].tolist(), strict=True):
        s = np.sqrt(0.01 + 0.1 * (y_prev - 0.0) ** 2 + 0.8 * s * s)
        reference += -0.5 * (y_now / s) ** 2 - np.log(s) - 0.5 * np.log(2 * np.pi)
    loops = [n for n in rk.toposort(f.graph) if type(n.op).__name__ == "Scan"]
    print("GARCH(1,1) log-likelihood with rk.scan over 10,000 returns, and its gradient:")
    print(
        f"  {len(rk.toposort(f.graph))} nodes after rewriting, {len(loops)} of them loops "
        f"(forward and reverse); rk.function took {built * 1e3:.0f} ms"
    )
    print(f"  loglik = {float(value):.6f}; a plain Python loop gives {reference:.6f}")
    print(f"  d/d(mu, a0, a1, b1) = {np.round(np.asarray(grads, dtype=float), 3)}")
    import jax

    with jax.enable_x64(True):  # f.jax_fn is a pure JAX function: jax.grad composes with it
        theirs = jax.grad(lambda *a: f.jax_fn(*a)[0], argnums=(1, 2, 3, 4))(
            series, 0.0, 0.01, 0.1, 0.8
        )
    agree = np.allclose(np.asarray(grads, dtype=float), np.asarray(theirs), rtol=1e-10)
    print(f"  agrees with jax.grad of the compiled function's jax_fn to 1e-10: {agree}")


def unrolled_loop() -> None:
    """A Python loop of 200 steps and its gradient: rolled into scans, compiled once."""
    import time

    x = rt.vector("x", shape=(4,))
    y = x
    for k in range(200):  # a user's unrolled loop: 200 copies of the step
        y = rt.tanh(y * 0.5 + k % 5) + rt.log(1 + rt.exp(y))
    cost = rt.sum(y)
    data = np.linspace(-1.0, 1.0, 4)
    print("A Python loop of 200 steps, y = tanh(y/2 + k%5) + log(1 + exp(y)), and its gradient:")
    rk.function([x], x + 1.0)(data)  # JAX's own start-up, outside the timings
    timings, values = {}, {}
    for roll in (True, False):
        start = time.perf_counter()
        f = rk.function([x], [cost, rk.grad(cost, x, roll=roll)], roll=roll, cache=False)
        values[roll] = f(data)
        timings[roll] = time.perf_counter() - start
        if roll:
            loops = [n for n in rk.toposort(f.graph) if getattr(n.op, "inner_graphs", None)]
            print(f"  rolled: {len(rk.toposort(f.graph))} nodes, {len(loops)} of them loops")
    print(
        f"  first call {timings[True]:.2f} s rolled, {timings[False]:.2f} s unrolled "
        "(roll=False): XLA compiles one step, not 200"
    )
    pairs = zip(values[True], values[False], strict=True)
    same = all(np.allclose(a, b, rtol=1e-12) for a, b in pairs)
    print(f"  rolled and unrolled agree to 1e-12: {same}")


if __name__ == "__main__":
    main()


def picture(folder: Path) -> Path | None:
    """The textbook cross-entropy's rewrite as a picture (``demo-graph.svg``): the graph
    before and after, each rule's nodes coloured; where Graphviz is installed."""
    w, X, t = rt.vector("w"), rt.matrix("X"), rt.vector("t")
    p = rt.sigmoid(X @ w)
    loss = -rt.mean(t * rt.log(p) + (1 - t) * rt.log(1 - p))
    f = rk.function([w, X, t], loss)
    print("A picture of that cross-entropy's rewrite (rk.draw_rewrite):")
    try:
        path = rk.draw_rewrite(f, folder / "demo-graph.svg")
    except rk.GraphvizNotFoundError as error:
        print(f"  no picture: {error}")
        return None
    print(f"  wrote {path.resolve()}: before and after, {len(f.trace)} rewrites coloured")
    return path
