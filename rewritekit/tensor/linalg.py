"""(to be written) rt.linalg: cholesky solve solve_triangular inv det slogdet trace diag."""

from __future__ import annotations

__all__: list[str] = []
