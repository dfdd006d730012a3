"""(to be written) The products Ops of rewritekit.tensor."""

from __future__ import annotations

__all__: list[str] = []
