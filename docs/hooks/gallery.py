"""MkDocs hook that fills docs/gallery.md with pictures of rewritekit graphs at build time.

The examples follow docs/pictures.md. Each one's code runs here, in one namespace and in
order, then its drawing call (``rk.draw``, ``rk.draw_rewrite``) writes an SVG that goes into
the site as ``gallery/<file>``, never into the source tree. Without the Graphviz ``dot``
program the page shows each graph's DOT text from the matching ``rk.to_dot`` call instead,
with a note, and the build still passes under ``--strict``.
"""

from __future__ import annotations

import logging
import pathlib
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

import rewritekit as rk

# the examples import as `examples.<name>` from the repository's root (mkdocs.yml's folder);
# added to sys.path when the gallery runs (MkDocs restores sys.path after loading hooks)
_ROOT = str(pathlib.Path(__file__).resolve().parents[2])

log = logging.getLogger("mkdocs.hooks.gallery")

PAGE = "gallery.md"
START, END = "<!-- gallery -->", "<!-- /gallery -->"
SETUP = "import rewritekit as rk\nimport rewritekit.tensor as rt"


@dataclass(frozen=True)
class Example:
    title: str
    text: str
    code: str  # builds the graph; runs after the examples before it
    draw: str  # the drawing call, with {path} for the picture's file
    dot: str  # the rk.to_dot call that gives the same picture's DOT text
    file: str  # the picture's name, shown in the call and used in the site


EXAMPLES = (
    Example(
        "A graph",
        "A small network's loss, as in [Pictures of graphs](pictures.md#a-graph): inputs in "
        "green, constants in grey, the output in blue, each edge labelled with its type.",
        """
        X, w, b = rt.matrix("X"), rt.vector("w"), rt.scalar("b")
        hidden = rt.tanh(X @ w + b)
        loss = rt.mean(rt.log(1 + rt.exp(-hidden))) + 0.01 * rt.sum(w**2)
        """,
        "rk.draw(loss, {path})",
        "rk.to_dot(loss)",
        "loss.svg",
    ),
    Example(
        "Its gradient",
        "`rk.grad` builds the gradient as more graph; the forward nodes it needs are drawn "
        "once, with an edge to each use.",
        """
        grads = rk.grad(loss, [w, b])
        """,
        "rk.draw([loss, *grads], {path})",
        "rk.to_dot([loss, *grads])",
        "loss-grad.svg",
    ),
    Example(
        "A loop",
        "A scan's body is an inner graph, drawn as a cluster beside its node; its outputs "
        "feed the node along dashed edges ([inner graphs](pictures.md#inner-graphs)).",
        """
        x, a = rt.vector("x"), rt.scalar("a")

        def step(carry, xi):
            new = carry * a + rt.log(1 + rt.exp(xi))
            return new, new * 2

        last, ys = rk.scan(step, rt.constant(0.0), x)
        """,
        "rk.draw([last, ys], {path})",
        "rk.to_dot([last, ys])",
        "scan.svg",
    ),
    Example(
        "A large graph, folded",
        "A chain of 300 elementwise steps, over 3,000 nodes: the boxes nearest the output "
        "are drawn (here 60, `max_nodes=60`; 200 by default), the rest folded into a dashed "
        "box that counts what it holds ([large graphs](pictures.md#large-graphs)).",
        """
        y = rt.vector("y")
        z = y
        for _ in range(300):
            z = 0.5 * rt.log(1 + rt.exp(z)) + z / 2 - rt.exp(-z * z) * 0.1
        chain = rt.sum(z)
        """,
        "rk.draw(chain, {path}, max_nodes=60)",
        "rk.to_dot(chain, max_nodes=60)",
        "chain.svg",
    ),
    Example(
        "A node highlighted",
        "`highlight=` fills nodes orange, with a note under the label.",
        """
        h = rt.exp(x) + 1.0
        s = rt.sum(rt.log(h) * 2.0)
        note = {h.owner.inputs[0]: "overflows past 709"}
        """,
        "rk.draw(s, {path}, highlight=note)",
        "rk.to_dot(s, highlight=note)",
        "highlight.svg",
    ),
    Example(
        "A compiled function's rewrite",
        "`rk.function` runs the standard rules before lowering: `log(1 + exp(x))` becomes "
        "`softplus(x)`, and the gradient's broadcasting and shape bookkeeping folds away, "
        "leaving `sigmoid(x)`. The graph before and after, each node a rule replaced or "
        "built coloured by that rule ([rewrites](pictures.md#rewrites)).",
        """
        cost = rt.sum(rt.log(1 + rt.exp(x)))
        f = rk.function([x], [cost, rk.grad(cost, x)])
        """,
        "rk.draw_rewrite(f, {path})",
        "rk.to_dot(f, rewrites=True)",
        "rewrite.svg",
    ),
    Example(
        "A probabilistic model",
        "The eight-schools model of `examples/eight_schools.py`: each draw takes a key and "
        "returns the next one (the random variables' first outputs), so the key threads "
        "through the model; `theta` is a deterministic function of three draws.",
        """
        from examples import eight_schools

        m = eight_schools.model()
        """,
        "rk.draw([m.theta, m.y], {path})",
        "rk.to_dot([m.theta, m.y])",
        "eight-schools.svg",
    ),
    Example(
        "Its log-density and gradient, rewritten",
        "`rl.joint_logprob` derives the density of the model given the data, on one flat "
        "unconstrained vector, and `rk.grad` its gradient; compiling rewrites both. The "
        "graph before and after, folded past 200 boxes a side.",
        """
        packing, logp, grad, back = eight_schools.density_graph(m)
        density = rk.function([packing.flat], [logp, grad])
        """,
        "rk.draw_rewrite(density, {path})",
        "rk.to_dot(density, rewrites=True)",
        "eight-schools-density.svg",
    ),
    Example(
        "Rule applications, step by step",
        "A `RewriteTrace` drawn alone: one cluster per rule application, the term the rule "
        "matched beside the term it built.",
        """
        after, trace = rk.rewrite(s, "default", trace=True)
        """,
        "rk.draw(trace, {path})",
        "rk.to_dot(trace)",
        "trace.svg",
    ),
)


def _dot_block(dot: str) -> str:
    """The DOT text, in a block one can fold away (open: it stands for the picture)."""
    body = textwrap.indent(f"```dot\n{dot.rstrip()}\n```", "    ")
    return f'???+ note "DOT text"\n\n{body}\n'


def _render(config: MkDocsConfig, files: Files) -> str:
    """The gallery's Markdown; each picture is added to ``files`` as a generated SVG."""
    parts = [
        f"Every example runs after those above it, which start with\n\n```python\n{SETUP}\n```\n"
    ]
    if _ROOT not in sys.path:
        sys.path.insert(0, _ROOT)
    namespace: dict[str, Any] = {}
    exec(SETUP, namespace)  # our own code, as shown
    have_dot = True
    with tempfile.TemporaryDirectory() as tmp:
        for example in EXAMPLES:
            code = textwrap.dedent(example.code).strip()
            exec(compile(code, f"gallery: {example.title}", "exec"), namespace)
            svg = pathlib.Path(tmp, example.file)
            if have_dot:
                try:
                    eval(example.draw.format(path="svg"), namespace, {"svg": svg})
                except rk.GraphvizNotFoundError:
                    have_dot = False
                    log.info("gallery: Graphviz 'dot' not found; showing DOT text instead")
            call = example.draw.format(path=f'"{example.file}"')
            parts.append(f"## {example.title}\n\n{example.text}\n")
            parts.append(f"```python\n{code}\n{call}\n```\n")
            if have_dot:
                uri = f"gallery/{example.file}"
                files.append(File.generated(config, uri, content=svg.read_bytes()))
                parts.append(f"![{example.title}]({uri})\n")
            else:
                parts.append(_dot_block(eval(example.dot, namespace)))
    if not have_dot:
        note = (
            '!!! note "Pictures need Graphviz"\n\n'
            "    This site was built without the Graphviz program `dot`, so each graph is "
            "shown as its DOT text (`rk.to_dot`); install Graphviz (`apt-get install "
            "graphviz`, `brew install graphviz`) and rebuild for the pictures.\n"
        )
        parts.insert(0, note)
    return "\n".join(parts)


_generated: dict[str, str] = {}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    if files.get_file_from_path(PAGE) is not None:
        _generated[PAGE] = _render(config, files)
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    head, start, rest = markdown.partition(START)
    _, end, tail = rest.partition(END)
    if not (start and end):
        raise ValueError(f"{PAGE}: expected the markers {START} and {END}")
    return head + _generated[PAGE] + tail
