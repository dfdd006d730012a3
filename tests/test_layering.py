"""The import rules of DESIGN.md, checked over every module."""

import ast
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "rewritekit"

# layer -> rewritekit subpackages it may import (besides itself and rewritekit.errors)
ALLOWED = {
    "ir": set(),
    "tensor": {"ir"},
    # DESIGN's grad.py, named apart from the function rk.grad; it runs the stabilize rules
    "autodiff": {"ir", "tensor", "rules", "vectorize"},
    # rk.vectorize / rk.vmap: batching rules over the tensor Ops, Blockwise as the fallback
    "vectorize": {"ir", "tensor"},
    "rules": {"ir", "tensor", "backends"},
    "backends": {"ir", "tensor", "backends"},
    # the PPL layer: samplers over the random Ops, log-densities found by rules
    "random": {"ir", "tensor"},
    "logprob": {"ir", "tensor", "rules", "random"},
    # importing JAX functions: jaxprs become graphs of the tensor Ops, lowered back by JAX;
    # rk.optimize rewrites them with the rules (and the loop pass) as rk.function does
    "jaxpr": {"ir", "tensor", "backends", "vectorize", "rules"},
}


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def _layer(path):
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py")


# Top-level modules (compile.py, demo.py, __init__.py) tie the layers together.
LAYERED = sorted(p for p in PACKAGE.rglob("*.py") if _layer(p) in ALLOWED)


def test_every_layer_has_modules():
    assert {_layer(p) for p in LAYERED} >= {"ir", "tensor"}


@pytest.mark.parametrize("path", LAYERED, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_imports_only_the_layers_below_it(path):
    layer = _layer(path)
    allowed = ALLOWED[layer] | {layer, "errors"}
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] == "rewritekit" and len(parts) > 1:
            assert parts[1] in allowed, f"{path.name} ({layer}) imports {name}"


def test_importing_rewritekit_does_not_import_jax():
    code = "import sys, rewritekit, rewritekit.tensor, rewritekit.ir; print('jax' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize(
    "package",
    [
        "rewritekit.tensor",
        "rewritekit.backends",
        "rewritekit.rules.library",
        "rewritekit.logprob",
        "tests.records",
    ],
)
def test_no_name_shadows_a_submodule(package):
    """`from package import name` must give the submodule where one exists (a function of
    the same name re-exported by the package would replace it, depending on import order)."""
    import importlib
    import pkgutil

    module = importlib.import_module(package)
    for info in pkgutil.iter_modules(module.__path__):
        sub = importlib.import_module(f"{package}.{info.name}")
        assert getattr(module, info.name) is sub, f"{package}.{info.name} is shadowed"


def test_the_library_never_imports_the_benchmark_extras():
    """pytensor and matplotlib are the `bench` extra: bench/compare.py only."""
    for path in PACKAGE.rglob("*.py"):
        for name in _imports(path):
            assert name.split(".")[0] not in {"pytensor", "matplotlib"}, f"{path} imports {name}"


TENSOR = PACKAGE / "tensor"


def _function_imports(path):
    tree = ast.parse(path.read_text())
    for func in ast.walk(tree):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for node in ast.walk(func):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield func.name if hasattr(func, "name") else "<lambda>", node.lineno


@pytest.mark.parametrize("path", sorted(TENSOR.glob("*.py")), ids=lambda p: p.name)
def test_no_tensor_module_imports_inside_a_function(path):
    """The Op modules form layers (each imports only those below it), so no import has to
    hide in a function to dodge a cycle."""
    found = list(_function_imports(path))
    assert not found, f"{path.name} imports inside functions: {found}"


def test_the_tensor_modules_import_each_other_without_a_cycle():
    edges = {}
    for path in TENSOR.glob("*.py"):
        name = path.stem
        tree = ast.parse(path.read_text())
        targets = set()
        for node in tree.body:  # module level only
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith("rewritekit.tensor."):
                    targets.add(node.module.split(".")[2])
                elif node.module == "rewritekit.tensor":
                    targets.update(alias.name for alias in node.names)
        edges[name] = targets - {name}
    # depth-first search for a back edge
    state = {}

    def visit(name, stack):
        state[name] = "open"
        for target in sorted(edges.get(name, ())):
            assert state.get(target) != "open", f"import cycle: {' -> '.join([*stack, target])}"
            if target not in state:
                visit(target, [*stack, target])
        state[name] = "done"

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])
