"""The rewritekit showcase: ``python -m rewritekit.demo`` (or ``make demo``).

For now it shows the persistent graph IR: hash-consing, sharing, ``replace`` and
``dprint``. Later stages (rewriting, compiling to JAX, running) join as they land.
"""

from __future__ import annotations

import pickle

import rewritekit as rk
import rewritekit.tensor as rt


def main() -> None:
    """Build a small graph, print it, and show what the IR guarantees."""
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


if __name__ == "__main__":
    main()
