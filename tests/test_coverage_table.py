"""The coverage table of ``docs/tensor.md`` (which ``jax.numpy`` and ``pytensor.tensor``
functions exist in ``rewritekit.tensor``) is current: adding a function means rerunning
``.venv/bin/python tools/coverage.py --write``."""

from tools import coverage


def test_the_coverage_table_is_current():
    assert coverage.current() == coverage.table(), (
        "docs/tensor.md's coverage table is stale: run .venv/bin/python tools/coverage.py --write"
    )


def test_the_counts_are_real():
    import rewritekit.tensor as rt

    names = coverage.json.loads(coverage.NAMES.read_text())["jax.numpy"]["names"]
    assert len(names) > 300 and "exp" in names and hasattr(rt, "exp")
    assert coverage._present("exp") and not coverage._present("no_such_function")
