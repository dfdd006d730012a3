"""Differential fuzzing as a standing test: random graphs over the Op set give the same
results on the NumPy and JAX backends, rewritten or not, or fail with a rewritekit error
on both (``tests/fuzz/differential.py`` states the property, ``tests/fuzz/graphs.py``
draws the graphs). ``tools/fuzz.py`` runs the same property for many more graphs.

A failure prints the disagreements, the graph (``rk.dprint``) and the argument values.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.differential import check, report
from tests.fuzz.graphs import graphs


@settings(max_examples=70)
@given(graph=graphs())
def test_random_graphs_agree_on_every_backend_rewritten_or_not(graph):
    verdict = check(graph)
    assert not verdict.problems, report(graph, verdict)


# the families where backends most often part ways, drawn alone so that each gets graphs
# of its own: integer and float arithmetic with casts, and indexing in and out of bounds
FOCUS = {
    "arithmetic": ("binary", "unary_any", "unary_float", "cast", "bitwise", "reduction"),
    "indexing": ("getitem", "update", "take", "reshape"),
}


@pytest.mark.parametrize("focus", sorted(FOCUS))
@settings(max_examples=15)
@given(data=st.data())
def test_focused_graphs_agree(focus, data):
    graph = data.draw(graphs(families=FOCUS[focus]), label="graph")
    verdict = check(graph)
    assert not verdict.problems, report(graph, verdict)
