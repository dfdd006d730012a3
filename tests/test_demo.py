"""`make demo` runs the showcase; it must run and show what it claims."""

import shutil

import pytest

from rewritekit import demo


def test_demo_runs_and_shows_the_rewrite(capsys, tmp_path):
    demo.main(picture_dir=tmp_path)
    out = capsys.readouterr().out
    assert "the backends agree to 1e-12: True" in out
    assert "agrees with jax.grad of the compiled loss to 1e-12: True" in out
    assert "4. stabilize.softplus: log1p(exp(x)) -> softplus(x)" in out
    assert "rewritten : at x = 1e-20: 1e-20;  at x = 800: 800" in out
    assert "as written: at x = 1e-20: 0;  at x = 800: inf" in out


def test_demo_shows_the_standard_library_exact_where_the_written_loss_overflows(capsys):
    demo.standard_library()
    out = capsys.readouterr().out
    assert "default   : loss = 53.3333333333, grad = [ 0.666667 -0.666667]" in out
    assert "rules=None: loss = inf" in out
    assert "exact loss: 53.3333333333" in out
    assert "stabilize.softplus_of_log_sigmoid" in out


def test_demo_builds_and_evaluates_the_eight_schools_model(capsys):
    demo.probabilistic_model()
    out = capsys.readouterr().out
    assert "the same key again gives the same draw: True" in out
    assert "logp terms: ['mu', 'tau', 'value_2', 'theta_tilde']" in out
    assert "Bernoulli(logit=800) at 0: logp, d/dlogit = [-800.0, -1.0]" in out


def test_demo_runs_a_garch_likelihood_as_one_loop(capsys):
    demo.time_series_loop()
    out = capsys.readouterr().out
    assert "6 nodes after rewriting, 2 of them loops (forward and reverse)" in out
    value, reference = (
        float(v)
        for v in out.split("loglik = ")[1].split("\n")[0].split("; a plain Python loop gives ")
    )
    assert value == pytest.approx(reference, rel=1e-12)
    assert "agrees with jax.grad of the compiled function's jax_fn to 1e-10: True" in out


def test_demo_rolls_an_unrolled_loop_and_its_gradient(capsys):
    demo.unrolled_loop()
    out = capsys.readouterr().out
    assert "rolled and unrolled agree to 1e-12: True" in out
    assert "2 of them loops" in out


def test_demo_ends_with_a_picture_where_graphviz_is_installed(capsys, tmp_path):
    path = demo.picture(tmp_path)
    out = capsys.readouterr().out
    if shutil.which("dot") is None:
        assert path is None and "apt-get install graphviz" in out
    else:
        assert path == tmp_path / "demo-graph.svg"
        svg = path.read_text()
        assert "before rewriting" in svg and "stabilize." in svg
        assert f"wrote {path}" in out
