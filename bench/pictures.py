"""Time to draw large graphs: ``rk.to_dot``, and Graphviz's ``dot`` on what it gives.

Run: ``.venv/bin/python bench/pictures.py [--repeat 5]``.

Graphs (from ``bench/workloads.py``):

- W1 at N = 1,000: a chain of 1,000 elementwise steps, 11,001 nodes;
- W5: 200 softplus-and-sigmoid terms, the cost and its gradient, before rewriting;
- W5 rewrite: ``rk.to_dot(f, rewrites=True)`` of W5 compiled (both sides, coloured);
- W1 at N = 3,000 (33,001 nodes), for how the time grows.

For each: the nodes in the graph, the boxes drawn with the default ``max_nodes`` (200
per side), the nodes folded, the best of ``--repeat`` calls of ``rk.to_dot``, and, where
``dot`` is installed, the seconds ``dot -Tsvg`` takes to lay the picture out.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import WORKLOADS

import rewritekit as rk
from rewritekit.ir.dot import render


def _best(fn: Any, repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def _row(name: str, nodes: int, source: Any, repeat: int, **options: Any) -> str:
    seconds, dot = _best(lambda: rk.to_dot(source, **options), repeat)
    boxes = len(re.findall(r"^\s*n\d+ \[", dot, flags=re.MULTILINE))
    folded = sum(int(m.replace(",", "")) for m in re.findall(r"⋯ ([\d,]+) nodes folded", dot))
    layout = "-"
    if shutil.which("dot"):
        layout_s, _ = _best(lambda: render(dot, "svg"), 1)
        layout = f"{layout_s:.2f}"
    return f"| {name} | {nodes:,} | {boxes} | {folded:,} | {seconds * 1e3:.1f} | {layout} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| graph | nodes | boxes drawn | nodes folded | rk.to_dot (ms) | dot -Tsvg (s) |")
    print("|---|---:|---:|---:|---:|---:|")
    _, w1 = WORKLOADS["W1"].rewritekit(1000)
    print(_row("W1, N=1,000", len(rk.toposort(w1)), w1, args.repeat))
    ins, w5 = WORKLOADS["W5"].rewritekit(1)
    print(_row("W5 cost and gradient", len(rk.toposort(w5)), w5, args.repeat))
    f = rk.function(ins, w5)
    both = len(rk.toposort(w5)) + len(rk.toposort(f.graph))
    print(_row("W5, rewrite picture (both sides)", both, f, args.repeat, rewrites=True))
    _, w1_big = WORKLOADS["W1"].rewritekit(3000)
    print(_row("W1, N=3,000", len(rk.toposort(w1_big)), w1_big, args.repeat))
    print(_row("W1, N=1,000, max_nodes=2,000", len(rk.toposort(w1)), w1, 1, max_nodes=2000))


if __name__ == "__main__":
    main()
