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


def test_every_function_the_callers_use_is_here():
    used = coverage.json.loads(coverage.NAMES.read_text())["used"]
    assert set(used) == {"NumPyro, BlackJAX, Optax", "PyMC"}
    for group, entry in used.items():
        missing = [n for n in entry["names"] if not coverage._present_qualified(n)]
        assert len(entry["names"]) > 200 and not missing, f"{group} calls missing {missing}"
