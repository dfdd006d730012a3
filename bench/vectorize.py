"""Vectorized graphs against JAX's transformations by hand: per-example gradients of the
W3 MLP (``rk.vectorize`` of ``rk.grad`` against ``jax.vmap(jax.grad(...))``), the Jacobian
of ``tanh(W @ x) * x`` for a 100-vector (``rk.jacobian`` against ``jax.jacrev``) and the
Hessian of W5's cost in its 200 weights (``rk.hessian`` against ``jax.hessian``).

``.venv/bin/python bench/vectorize.py [--batch 256]``

Each measurement runs in a fresh process: "first" is everything up to the first result
(for rewritekit: ``rk.grad``/``rk.jacobian``/``rk.hessian``, ``rk.vectorize``,
``rk.function`` and the first call), "per call" the best of five means over about 20 ms
of calls. "nodes" is the rewritten graph's size against the graph as built.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SIZES = (784, 512, 512, 10)


def _data(batch: int) -> list[np.ndarray]:
    rng = np.random.default_rng(20261126)
    X = rng.normal(size=(batch, SIZES[0]))
    Y = np.eye(SIZES[-1])[rng.integers(0, SIZES[-1], size=batch)]
    params = []
    for i in range(3):
        params.append(rng.normal(size=(SIZES[i], SIZES[i + 1])) / np.sqrt(SIZES[i]))
        params.append(np.zeros(SIZES[i + 1]))
    return [X, Y, *params]


def _loss(x, y, params, ops):  # one example: x (784,), y (10,)
    tanh, exp, log, total = ops
    h = x
    for i in range(3):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < 2:
            h = tanh(h)
    return -total(y * (h - log(total(exp(h)))))


def _per_call(fn, args) -> float:
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < 0.02 or calls < 3:
        fn(*args)
        calls += 1
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def _mlp(system: str, batch: int) -> tuple:
    import jax
    import jax.numpy as jnp

    data = _data(batch)
    if system == "rewritekit":
        import rewritekit as rk
        import rewritekit.tensor as rt

        x, y = rt.vector("x", shape=(SIZES[0],)), rt.vector("y", shape=(SIZES[-1],))
        params = []
        for i in range(3):
            params.append(rt.matrix(f"W{i}", shape=(SIZES[i], SIZES[i + 1])))
            params.append(rt.vector(f"b{i}", shape=(SIZES[i + 1],)))
        loss = _loss(x, y, params, (rt.tanh, rt.exp, rt.log, rt.sum))
        X, Y = rt.matrix("X", shape=(batch, SIZES[0])), rt.matrix("Y", shape=(batch, SIZES[-1]))
        grads = rk.vectorize(rk.grad(loss, params), {x: X, y: Y})
        return rk.function([X, Y, *params], grads), grads, data

    def one(params, x, y):
        return _loss(x, y, params, (jnp.tanh, jnp.exp, jnp.log, jnp.sum))

    g = jax.jit(jax.vmap(jax.grad(one), in_axes=(None, 0, 0)))
    return (lambda X, Y, *params: g(list(params), X, Y)), None, data


def _jacobian(system: str, batch: int) -> tuple:
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(7)
    data = [rng.normal(size=(100, 100)) / 10, np.linspace(-1.0, 1.0, 100)]
    if system == "rewritekit":
        import rewritekit as rk
        import rewritekit.tensor as rt

        W, x = rt.matrix("W", shape=(100, 100)), rt.vector("x", shape=(100,))
        J = rk.jacobian(rt.tanh(W @ x) * x, x)
        return rk.function([W, x], J), J, data
    jac = jax.jit(jax.jacrev(lambda x, W: jnp.tanh(W @ x) * x))
    return (lambda W, x: jac(x, W)), None, data


def _hessian(system: str, batch: int) -> tuple:
    import jax
    import jax.numpy as jnp
    from workloads import WORKLOADS, w5_cost

    data = WORKLOADS["W5"].data(1)
    if system == "rewritekit":
        import rewritekit as rk
        import rewritekit.tensor as rt

        x, w = rt.scalar("x"), rt.vector("w", shape=(200,))
        H = rk.hessian(w5_cost(x, w, (rt.log, rt.exp, rt.sigmoid)), w)
        return rk.function([x, w], H), H, data
    hess = jax.jit(jax.hessian(lambda w, x: w5_cost(x, w, (jnp.log, jnp.exp, jax.nn.sigmoid))))
    return (lambda x, w: hess(w, x)), None, data


CASES = {"mlp": _mlp, "jacobian": _jacobian, "hessian": _hessian}


def worker(case: str, system: str, batch: int) -> dict:
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.jit(lambda a: a.sum())(np.ones(3))  # JAX's warm-up, paid by neither side
    if system == "rewritekit":  # the imports and the lowering's warm-up too
        import rewritekit as rk
        import rewritekit.tensor as rt

        rk.function([v := rt.vector("v")], rt.sum(rt.exp(v)))(np.ones(3))
    start = time.perf_counter()
    fn, built, data = CASES[case](system, batch)

    def call(*a):
        return jax.block_until_ready(fn(*a))

    out = call(*data)
    first = time.perf_counter() - start
    outs = out if isinstance(out, (list, tuple)) else [out]
    row = {
        "first": first,
        "per_call": _per_call(call, data),
        "checksum": float(sum(np.sum(np.abs(np.asarray(o))) for o in outs)),
        "fallback": [],
    }
    if built is not None:
        import rewritekit as rk
        from rewritekit.vectorize import fallback_ops

        row["fallback"] = fallback_ops(fn.graph)
        row["nodes"] = [len(rk.toposort(fn.graph)), len(rk.toposort(built))]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256, help="the MLP's batch")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.worker:
        print(json.dumps(worker(*opts.worker, opts.batch)))
        return
    print(
        "| case | rewritekit first | JAX first | ratio | rewritekit per call | JAX per call "
        "| ratio | nodes (rewritten / built) | agree | Blockwise |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for case in opts.cases.split(","):
        rows = {}
        for system in ("rewritekit", "jax"):
            out = subprocess.run(
                [sys.executable, __file__, "--worker", case, system, "--batch", str(opts.batch)],
                capture_output=True,
                text=True,
                check=True,
            )
            rows[system] = json.loads(out.stdout.strip().splitlines()[-1])
        ours, theirs = rows["rewritekit"], rows["jax"]
        agree = abs(ours["checksum"] - theirs["checksum"]) <= 1e-9 * max(1.0, theirs["checksum"])
        nodes = ours.get("nodes", ["-", "-"])
        print(
            f"| {case} | {ours['first']:.3f} s | {theirs['first']:.3f} s | "
            f"{ours['first'] / theirs['first']:.2f} | {ours['per_call'] * 1e3:.3f} ms | "
            f"{theirs['per_call'] * 1e3:.3f} ms | {ours['per_call'] / theirs['per_call']:.2f} | "
            f"{nodes[0]} / {nodes[1]} | {'yes' if agree else 'NO'} | "
            f"{', '.join(ours['fallback']) or 'none'} |",
            flush=True,
        )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
