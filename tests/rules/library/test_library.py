"""The standard library as a whole: every rule is sound and fires on its example, the
pipelines compose, the catalogue is current, and rewriting never changes a value."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.rules import library
from rewritekit.rules.library import catalog
from rewritekit.testing import RuleMismatch, check_rule, draw_inputs, example_graph

ALL_RULES = list(library.default)
PHASES = ("fold", "canonicalize", "stabilize", "specialize")
DOCS = Path(__file__).resolve().parents[3] / "docs" / "rules-library.md"


def test_the_library_has_every_phase_and_unique_names():
    for phase in PHASES:
        assert len(getattr(library, phase)) > 0, phase
    names = [r.name for r in ALL_RULES]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    for r in ALL_RULES:
        assert len(r.tags & set(PHASES)) == 1, (r.qualname, r.tags)
        assert r.qualname.split(".")[0] in PHASES, r.qualname


def test_named_pipelines():
    assert rk.rules.as_ruleset("default") is library.default
    assert {r.qualname for r in library.NAMED["fast_compile"]} == {r.qualname for r in library.fold}
    stabilize = {r.qualname for r in library.NAMED["stabilize"]}
    assert stabilize == {r.qualname for p in PHASES[:3] for r in getattr(library, p)}
    order = [r.qualname.split(".")[0] for r in library.default]
    assert order == sorted(order, key=PHASES.index)  # phase order is priority
    unsafe = library.default.excluding("shape_unsafe")
    assert 0 < len(unsafe) < len(library.default)
    assert all("shape_unsafe" not in r.tags for r in unsafe)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.qualname)
def test_every_rule_fires_on_its_own_example(rule):
    graph = example_graph(rule)
    rewritten, trace = rk.rewrite(graph, rk.rules.RuleSet([rule]), trace=True)
    assert rewritten is not graph
    assert rule.qualname in trace.fired()
    before, after = catalog.example_pair(rule)  # what the catalogue shows
    assert before != after


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.qualname)
@settings(max_examples=8)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_rule_is_sound_on_its_domain(rule, seed):
    check_rule(rule, seed=seed)


def test_check_rule_names_an_unsound_rule():
    a = rk.lvar("a")
    bad = rk.rule(rt.log(1 + a), rt.log(a), name="bad_log")
    with pytest.raises(RuleMismatch, match=r"bad_log.*changes the value"):
        check_rule(bad)
    never = rk.rule(rt.exp(rt.log(a)), a, name="never", example=lambda: rt.exp(rt.vector("v")))
    with pytest.raises(RuleMismatch, match="does not fire"):
        check_rule(never)


def test_the_catalogue_is_current():
    assert DOCS.read_text() == catalog.markdown(), "run `make rules-docs`"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.qualname)
def test_the_default_pipeline_keeps_every_example_value(rule):
    """Rules of the other phases act on each example too: the whole pipeline converges
    and keeps the value."""
    graph = example_graph(rule)
    rewritten = rk.rewrite(graph, "default")
    assert rewritten.type == graph.type
    inputs, values = draw_inputs(graph, rule.domain, seed=0)
    f = rk.function(inputs, [graph, rewritten], backend="numpy", rules=None)
    with np.errstate(all="ignore"):
        before, after = f(*values)
    rtol, atol = rk.testing.rule_tolerance(graph.dtype)
    np.testing.assert_allclose(after, before, rtol=rtol, atol=atol, equal_nan=True)
