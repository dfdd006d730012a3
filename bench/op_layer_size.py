"""The size of the Op layer: lines in rewritekit/tensor and rewritekit/backends.

Counts, per directory, the files, all lines, and code lines (neither blank, comment nor
docstring), plus the two figures issue 21 tracks: imports written inside a function and
`vjp` methods. Run it on any checkout to compare two commits:

    python bench/op_layer_size.py            # this checkout
    git worktree add /tmp/before 5d7ea2c && python bench/op_layer_size.py /tmp/before
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

DIRECTORIES = ("rewritekit/tensor", "rewritekit/backends")
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def docstring_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def code_lines(source: str, tree: ast.Module) -> int:
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    skip.add(tokenize.ENDMARKER)
    docs = docstring_lines(tree)
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skip:
            lines.update(n for n in range(token.start[0], token.end[0] + 1) if n not in docs)
    return len(lines)


def local_imports(tree: ast.Module) -> int:
    count = 0
    for function in (n for n in ast.walk(tree) if isinstance(n, FUNCTIONS)):
        body = ast.walk(function)
        count += sum(isinstance(n, (ast.Import, ast.ImportFrom)) for n in body)
    return count


def vjp_methods(tree: ast.Module) -> int:
    return sum(isinstance(n, ast.FunctionDef) and n.name == "vjp" for n in ast.walk(tree))


def measure(directory: Path) -> dict[str, int]:
    figures = dict(files=0, lines=0, code=0, local_imports=0, vjp_methods=0, longest=0)
    for path in sorted(directory.rglob("*.py")):
        source = path.read_text()
        tree = ast.parse(source)
        figures["files"] += 1
        figures["lines"] += len(source.splitlines())
        figures["longest"] = max(figures["longest"], len(source.splitlines()))
        figures["code"] += code_lines(source, tree)
        figures["local_imports"] += local_imports(tree)
        figures["vjp_methods"] += vjp_methods(tree)
    return figures


def main(root: Path) -> None:
    print("| directory | files | lines | code lines | longest file | local imports | vjp methods |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in DIRECTORIES:
        f = measure(root / name)
        print(
            f"| {name} | {f['files']} | {f['lines']:,} | {f['code']:,} | {f['longest']} "
            f"| {f['local_imports']} | {f['vjp_methods']} |"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
