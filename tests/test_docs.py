"""The Python examples in README.md run as written."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # our own README
    assert "add: cannot broadcast shapes (3,) and (4,) (inputs 'a', 'b')" in capsys.readouterr().out


def test_backend_walkthrough_runs():
    text = (README.parent / "docs" / "backends.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    namespace: dict = {}
    exec(compile(blocks[-1], "docs/backends.md", "exec"), namespace)  # the full example
    assert namespace["backend"].calls == 1


def test_rules_guide_runs(capsys):
    text = (README.parent / "docs" / "rules.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 9
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/rules.md", "exec"), namespace)  # our own guide, in order
    out = capsys.readouterr().out
    assert "cycling rules: sin_to_cos, cos_to_sin" in out
    assert "rule 'add_zero' changes float64[?] to int64[?]" in out
    assert namespace["f"].trace.fired() == {"stabilize.log1p": 1}
    assert float(namespace["value"][0]) == 1e-20


def test_gradients_guide_runs(capsys):
    text = (README.parent / "docs" / "gradients.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 5
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/gradients.md", "exec"), namespace)  # our own guide
    out = capsys.readouterr().out
    assert "grad: cannot differentiate with respect to 'n' of dtype int64" in out
    assert "float64[?,?] float64[?,?]" in out
