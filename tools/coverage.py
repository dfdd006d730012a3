"""Which ``jax.numpy`` and ``pytensor.tensor`` functions exist in ``rewritekit.tensor``:
the coverage table of ``docs/tensor.md``, generated here and kept current by
``tests/test_coverage_table.py``.

The two libraries' public function names are stored in ``docs/coverage-names.json`` (so
the table needs neither library installed); refresh them where both are installed::

    .venv/bin/python tools/coverage.py --refresh-names   # needs the bench extra (pytensor)
    .venv/bin/python tools/coverage.py --write           # rewrites the table in docs/tensor.md

A name counts as present when ``rt.<name>`` exists (or ``rt.linalg.<name>``, for names
NumPy keeps in ``linalg`` too, such as ``det``).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import types

ROOT = pathlib.Path(__file__).resolve().parents[1]
NAMES = ROOT / "docs" / "coverage-names.json"
DOC = ROOT / "docs" / "tensor.md"
START, END = "<!-- coverage:start -->", "<!-- coverage:end -->"


def _public_functions(module: types.ModuleType) -> list[str]:
    return sorted(
        name
        for name in dir(module)
        if not name.startswith("_")
        and not name[0].isupper()  # typing aliases and classes, not functions
        and callable(getattr(module, name))
        and not isinstance(getattr(module, name), (type, types.ModuleType))
    )


def refresh_names() -> None:
    """Store the public function names of the installed ``jax.numpy`` and
    ``pytensor.tensor``."""
    import jax
    import jax.numpy as jnp
    import pytensor
    import pytensor.tensor as pt

    stored = {
        "jax.numpy": {"version": jax.__version__, "names": _public_functions(jnp)},
        "pytensor.tensor": {"version": pytensor.__version__, "names": _public_functions(pt)},
    }
    NAMES.write_text(json.dumps(stored, indent=1) + "\n")


def _present(name: str) -> bool:
    import rewritekit.tensor as rt

    return hasattr(rt, name) or hasattr(rt.linalg, name)


def table() -> str:
    """The coverage section's text (between the markers of ``docs/tensor.md``)."""
    stored = json.loads(NAMES.read_text())
    lines = [
        "| library | functions | here | missing |",
        "|---|---:|---:|---|",
    ]
    for library, entry in stored.items():
        names = entry["names"]
        present = [n for n in names if _present(n)]
        missing = [n for n in names if not _present(n)]
        shown = " ".join(f"`{n}`" for n in missing)
        lines.append(
            f"| `{library}` {entry['version']} | {len(names)} | {len(present)} | {shown} |"
        )
    return "\n".join(lines)


def write() -> None:
    """Rewrite the table in ``docs/tensor.md``."""
    text = DOC.read_text()
    pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
    DOC.write_text(pattern.sub(lambda _: f"{START}\n{table()}\n{END}", text))


def current() -> str:
    """The table as ``docs/tensor.md`` has it now."""
    text = DOC.read_text()
    return text.split(START, 1)[1].split(END, 1)[0].strip()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refresh-names", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.refresh_names:
        refresh_names()
    if args.write:
        write()
    if not (args.refresh_names or args.write):
        print(table())
