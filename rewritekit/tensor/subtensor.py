"""(to be written) The subtensor Ops of rewritekit.tensor."""

from __future__ import annotations

__all__: list[str] = []
