"""(to be written) The sort Ops of rewritekit.tensor."""

from __future__ import annotations

__all__: list[str] = []
