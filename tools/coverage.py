"""Which ``jax.numpy`` and ``pytensor.tensor`` functions exist in ``rewritekit.tensor``:
the coverage table of ``docs/tensor.md``, generated here and kept current by
``tests/test_coverage_table.py``.

The two libraries' public function names are stored in ``docs/coverage-names.json`` (so
the table needs neither library installed); refresh them where both are installed::

    .venv/bin/python tools/coverage.py --refresh-names   # needs the bench extra (pytensor)
    .venv/bin/python tools/coverage.py --write           # rewrites the table in docs/tensor.md

A name counts as present when ``rt.<name>`` exists (or ``rt.linalg.<name>``, for names
NumPy keeps in ``linalg`` too, such as ``det``).

The same file stores the functions that the libraries built on JAX and PyTensor *call*
(NumPyro, BlackJAX and Optax; PyMC), found by reading their wheels' sources: every
attribute reached through an import of ``jax.numpy``, ``jax.lax``, ``jax.nn``,
``jax.scipy.special``/``linalg`` or ``pytensor.tensor`` that is a function. Refresh with::

    pip download --no-deps -d /tmp/wheels numpyro blackjax optax pymc
    .venv/bin/python tools/coverage.py --refresh-used /tmp/wheels/*.whl

A qualified name is present where its namespace puts it here (``jax.numpy.linalg.svd`` is
``rt.linalg.svd``, ``jax.lax.scan`` is ``rk.scan``, ``jax.lax.clamp`` is ``rt.lax.clamp``);
``EXCLUDED`` lists, with the reason, the few names that are not tensor functions.
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


#: The namespaces whose functions the callers' lists record.
SCANNED = {
    "NumPyro, BlackJAX, Optax": (
        ("numpyro", "blackjax", "optax"),
        ("jax.numpy", "jax.lax", "jax.nn", "jax.scipy.special", "jax.scipy.linalg"),
    ),
    "PyMC": (("pymc",), ("pytensor.tensor",)),
}

#: Internals of the scanned namespaces that the callers reach but that are not tensor
#: functions (their own graph machinery), with the reason each is left out.
INTERNAL_PREFIXES = (
    "pytensor.tensor.random",  # random variables: the PPL's distributions (rewritekit.random)
    "pytensor.tensor.rewriting",
    "pytensor.tensor.type",
    "pytensor.tensor.sharedvar",
    "pytensor.tensor.utils",
    "pytensor.tensor.variable",
    "pytensor.tensor.exceptions",
    "pytensor.tensor.elemwise",
    "pytensor.tensor.blockwise",
    "pytensor.tensor.type_other",
    "jax.nn.initializers",  # parameter initializers: random draws at setup, not graph code
)
EXCLUDED = {
    "jax.lax.custom_root": "a differentiation rule around a user's solver, not a function",
    "jax.lax.dtype": "a dtype query on concrete values",
    "jax.lax.psum": "a collective over a named mapped axis (pmap/shard_map); rewritekit "
    "shards whole graphs instead (docs/scaling.md)",
    "jax.lax.pmean": "as psum",
    "pytensor.tensor.NoneConst.equals": "PyTensor's graph machinery",
    "pytensor.tensor.subtensor.as_index_literal": "PyTensor's graph machinery",
    "pytensor.tensor.subtensor.get_canonical_form_slice": "PyTensor's graph machinery",
}

#: PyTensor's modules whose functions ``pytensor.tensor`` also exports.
PYTENSOR_MODULES = ("basic", "extra_ops", "math", "shape", "special", "subtensor")

#: Where a scanned namespace's functions live here, most specific first.
_HOMES = (
    ("jax.numpy.linalg.", ("linalg",)),
    ("jax.scipy.linalg.", ("linalg",)),
    ("jax.lax.linalg.", ("linalg",)),
    ("pytensor.tensor.linalg.", ("linalg",)),
    ("pytensor.tensor.nlinalg.", ("linalg",)),
    ("pytensor.tensor.slinalg.", ("linalg",)),
    ("jax.numpy.fft.", ("fft",)),
    ("jax.lax.", ("lax", "rk")),
    ("jax.nn.", ("nn", "")),
    ("jax.scipy.special.", ("",)),
    ("jax.numpy.", ("", "rk")),
    *((f"pytensor.tensor.{sub}.", ("",)) for sub in PYTENSOR_MODULES),
    ("pytensor.tensor.", ("", "rk")),
)


def _scan_wheel(path: pathlib.Path, roots: tuple[str, ...]) -> set[str]:
    """The qualified names under ``roots`` that a wheel's modules (tests aside) reach."""
    import ast
    import zipfile

    found: set[str] = set()
    with zipfile.ZipFile(path) as wheel:
        for member in wheel.namelist():
            if not member.endswith(".py") or "/tests/" in member or "/test_" in member:
                continue
            try:
                tree = ast.parse(wheel.read(member))
            except SyntaxError:
                continue
            aliases: dict[str, str] = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for a in node.names:
                        aliases[a.asname or a.name.split(".")[0]] = (
                            a.name if a.asname else a.name.split(".")[0]
                        )
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    for a in node.names:
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute):
                    chain, base = [], node
                    while isinstance(base, ast.Attribute):
                        chain.append(base.attr)
                        base = base.value
                    if isinstance(base, ast.Name) and base.id in aliases:
                        found.add(".".join([aliases[base.id], *reversed(chain)]))
                elif isinstance(node, ast.Name) and node.id in aliases:
                    found.add(aliases[node.id])
    return {n for n in found if any(n.startswith(root + ".") for root in roots)}


def _function(qualified: str) -> bool:
    """Whether ``qualified`` names a public function (not a class, module or constant)."""
    import importlib

    parts = qualified.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                obj = getattr(obj, part)
        except AttributeError:
            return False
        break
    leaf = parts[-1]
    return (
        callable(obj)
        and not isinstance(obj, (type, types.ModuleType))
        and not leaf.startswith("_")
        and not leaf[0].isupper()
        and not any(p.startswith("_") for p in parts)
    )


def refresh_used(wheels: list[pathlib.Path]) -> None:
    """Store, per group of callers, the functions their wheels call."""
    stored = json.loads(NAMES.read_text())
    used = {}
    for group, (packages, roots) in SCANNED.items():
        names: set[str] = set()
        versions = []
        for wheel in wheels:
            package, version = wheel.name.split("-")[:2]
            if package in packages:
                versions.append(f"{package} {version}")
                names |= _scan_wheel(wheel, roots)
        kept = sorted(
            n
            for n in names
            if _function(n) and not n.startswith(INTERNAL_PREFIXES) and n not in EXCLUDED
        )
        used[group] = {"version": ", ".join(sorted(versions)), "names": kept}
    stored["used"] = used
    NAMES.write_text(json.dumps(stored, indent=1) + "\n")


def _present_qualified(qualified: str) -> bool:
    import rewritekit as rk
    import rewritekit.tensor as rt

    for prefix, homes in _HOMES:
        if qualified.startswith(prefix):
            name = qualified[len(prefix) :]
            if "." in name:  # jax.numpy.linalg.x under another prefix, or a method
                return False
            spaces = {"": rt, "rk": rk}
            for home in homes:
                space = spaces.get(home) or getattr(rt, home, None)
                if space is not None and hasattr(space, name):
                    return True
            return False
    return False


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
        if library == "used":
            continue
        names = entry["names"]
        present = [n for n in names if _present(n)]
        missing = [n for n in names if not _present(n)]
        shown = " ".join(f"`{n}`" for n in missing)
        lines.append(
            f"| `{library}` {entry['version']} | {len(names)} | {len(present)} | {shown} |"
        )
    for group, entry in stored.get("used", {}).items():
        names = entry["names"]
        missing = [n for n in names if not _present_qualified(n)]
        shown = " ".join(f"`{n}`" for n in missing)
        lines.append(
            f"| called by {group} ({entry['version']}) | {len(names)} | "
            f"{len(names) - len(missing)} | {shown} |"
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
    parser.add_argument("--refresh-used", nargs="+", type=pathlib.Path, metavar="WHEEL")
    args = parser.parse_args()
    if args.refresh_names:
        refresh_names()
    if args.refresh_used:
        refresh_used(args.refresh_used)
    if args.write:
        write()
    if not (args.refresh_names or args.refresh_used or args.write):
        print(table())
