"""Long-run differential fuzzing: the property of ``tests/fuzz/test_differential.py`` for
many more random graphs, outside pytest.

Each graph is compiled for NumPy and JAX, with ``rules=None`` and ``rules="default"``, and
called on two argument sets; the results must agree (``tests/fuzz/differential.py``).
Graphs are drawn in batches of ``--batch`` under seeds ``seed, seed + 1, ...``, so a run
is reproducible and stops cleanly at ``--examples`` graphs or after ``--minutes``.

Run::

    .venv/bin/python tools/fuzz.py --minutes 15 --seed 1
    .venv/bin/python tools/fuzz.py --examples 2000 --families binary cast

``--watch FILE`` writes each graph to FILE before running it, so that a run stuck in a
call that never returns leaves the culprit there. It prints progress per batch, then each
disagreement (the problems, the graph and its arguments) and a summary: graphs tried,
graphs with disagreements, graphs with known disagreements by reason
(``tests/fuzz/differential.py``), the time taken, the slowest graph's time, and the
disagreements grouped by kind. The exit status is 1 when a disagreement was found.
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import re
import sys
import time
import warnings
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the tests package lives at the root
    sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from tests.fuzz.differential import check, report  # noqa: E402
from tests.fuzz.graphs import OPS, graphs  # noqa: E402


def signature(graph: Any, problem: str) -> str:
    """A short name for the kind of a disagreement, to group a run's findings: what differs
    (backend or rewrite), then the Op that raised, or the Op whose value differs."""
    what = problem.split(":", 1)[0]
    failed = re.search(r"raised (\w+): (\w+)\S* failed when the function ran: (\w+)", problem)
    if failed:
        return f"{what}: {failed.group(2)} raised {failed.group(3)} on one side"
    raised = re.search(r"raised (\w+): (\w+)", problem)
    if "one raised" in problem and raised:
        return f"{what}: {raised.group(1)} ({raised.group(2)}) on one side"
    output = re.search(r"output (\d+):", problem)
    if output:
        var = graph.outputs[int(output.group(1))]
        op = type(var.owner.op).__name__ if var.owner is not None else "an input"
        return f"{what}: values of {op}"
    return problem.splitlines()[0][:80]


class Tally:
    """What a run found so far."""

    def __init__(self) -> None:
        self.tried = 0
        self.known = 0
        self.out_of_bounds = 0
        self.failures: list[str] = []
        self.kinds: collections.Counter[str] = collections.Counter()
        self.known_kinds: collections.Counter[str] = collections.Counter()
        self.first: dict[str, int] = {}  # kind -> the number of its first disagreement
        self.ops: collections.Counter[str] = collections.Counter()
        self.slowest: tuple[float, str] = (0.0, "")

    def record(self, graph: Any, watch: pathlib.Path | None = None) -> None:
        if watch is not None:  # a call that never returns leaves its graph here
            watch.write_text(graph.describe())
        started = time.perf_counter()
        verdict = check(graph)
        took = time.perf_counter() - started
        if took > self.slowest[0]:
            self.slowest = (took, graph.describe())
        self.tried += 1
        self.known += bool(verdict.known)
        for line in verdict.known:
            reason = line.rsplit("known: ", 1)[1] if "known: " in line else "index out of bounds"
            self.known_kinds[reason] += 1
        self.out_of_bounds += graph.out_of_bounds
        self.ops.update(step.split("(")[0].split("[")[0] for step in graph.steps)
        if verdict.problems:
            self.failures.append(report(graph, verdict))
            kind = signature(graph, verdict.problems[0])
            if graph.out_of_bounds:
                kind += " (index out of bounds)"
            self.kinds[kind] += 1
            self.first.setdefault(kind, len(self.failures))


def run_batch(
    tally: Tally,
    size: int,
    batch_seed: int,
    families: Any,
    deadline: float,
    watch: pathlib.Path | None = None,
) -> None:
    """Draw and check ``size`` graphs under ``batch_seed`` (stop early past ``deadline``)."""

    @seed(batch_seed)
    @settings(
        max_examples=size,
        deadline=None,
        database=None,
        derandomize=False,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(graph=graphs(families=families))
    def batch(graph: Any) -> None:
        if time.perf_counter() < deadline:
            tally.record(graph, watch)

    batch()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="graphs to try (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first batch")
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long")
    parser.add_argument("--batch", type=int, default=100, help="graphs per batch")
    parser.add_argument(
        "--families", nargs="*", choices=sorted(OPS), default=None, help="Op families to draw"
    )
    parser.add_argument(
        "--watch", type=pathlib.Path, default=None, help="write each graph here before its run"
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    deadline = start + (args.minutes * 60 if args.minutes is not None else float("inf"))
    tally = Tally()
    batch_seed = args.seed
    while tally.tried < args.examples and time.perf_counter() < deadline:
        size = min(args.batch, args.examples - tally.tried)
        before = tally.tried
        run_batch(tally, size, batch_seed, args.families, deadline, args.watch)
        print(
            f"seed {batch_seed}: {tally.tried} graphs, {len(tally.failures)} with "
            f"disagreements, {tally.known} known, {time.perf_counter() - start:.0f} s",
            flush=True,
        )
        batch_seed += 1
        if tally.tried == before:
            break
    for number, failure in enumerate(tally.failures, 1):
        print(f"\n=== disagreement {number} " + "=" * 60)
        print(failure)
    elapsed = time.perf_counter() - start
    print("\n=== summary " + "=" * 60)
    print(f"graphs tried:              {tally.tried}")
    print(f"graphs with disagreements: {len(tally.failures)}")
    print(f"graphs with known disagreements: {tally.known}")
    for reason, count in tally.known_kinds.most_common():
        print(f"  {count:5d}  {reason}")
    print(f"graphs with an out-of-bounds index reaching an output: {tally.out_of_bounds}")
    print(f"time: {elapsed:.1f} s ({elapsed / max(tally.tried, 1) * 1000:.0f} ms per graph)")
    print(f"Ops applied: {sum(tally.ops.values())} ({len(tally.ops)} kinds)")
    print(f"slowest graph: {tally.slowest[0]:.2f} s")
    if tally.kinds:
        print("disagreements by kind (count, first one):")
        for kind, count in tally.kinds.most_common():
            print(f"  {count:5d}  #{tally.first[kind]:<5d} {kind}")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
