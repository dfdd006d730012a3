"""Griffe extension for the API pages: rewritekit's docstrings and constructors as written.

- The docstrings are Google style and title their doctests ``Example:``. Griffe's Google
  parser knows only the plural ``Examples:`` as a section of examples; the singular becomes
  an admonition whose ``>>>`` lines Markdown would read as nested quotes.
- A few module docstrings introduce a code block with reStructuredText's ``::``; in
  Markdown the indented block is code already, so ``math::`` is shown as ``math:``.
- Interned classes (``TensorType``, ``Apply``) are built by ``__new__`` and have no
  ``__init__``; Griffe takes a class's signature from ``__init__`` only, so they would show
  no parameters, and their ``Args:`` would warn as unknown.

Registered in mkdocs.yml under the mkdocstrings handler's ``extensions``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_SINGULAR = re.compile(r"^(\s*)Example:[ \t]*$", flags=re.MULTILINE)
_LITERAL = re.compile(r"(\S)::[ \t]*$", flags=re.MULTILINE)  # "the math::" -> "the math:"


class RewritekitDocstrings(griffe.Extension):
    """Retitle ``Example:`` sections ``Examples:`` and drop reStructuredText's ``::`` markers
    before the docstrings are parsed; give ``__new__``-built classes their signature."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        docstring = obj.docstring
        if docstring is not None:
            text = _SINGULAR.sub(r"\1Examples:", docstring.value)
            docstring.value = _LITERAL.sub(r"\1:", text)

    def on_class_members(self, *, cls: griffe.Class, **kwargs: Any) -> None:
        new = cls.members.get("__new__")
        if "__init__" in cls.members or not isinstance(new, griffe.Function):
            return
        init = griffe.Function(
            "__init__",
            lineno=new.lineno,
            endlineno=new.endlineno,
            parameters=griffe.Parameters(*new.parameters),
            returns=None,
        )
        cls.set_member("__init__", init)  # the signature shown for the class
