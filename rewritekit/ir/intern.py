"""Weak intern tables: one live object per key, freed when nothing else refers to it.

``WeakInternTable`` maps a structural key to a weak reference. Lookups take no lock (a
``dict.get`` is atomic); insertion happens under a re-entrant lock after a second look, so
concurrent constructions of the same key from several threads give one object. An entry
removes itself when its object dies (the weak reference's callback), and only if the
entry is still the one the callback belongs to.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

__all__ = ["InternStats", "WeakInternTable", "intern_stats"]


class _KeyedRef(weakref.ref):  # type: ignore[type-arg]
    """A weak reference that remembers the table key it was stored under."""

    __slots__ = ("key",)

    def __new__(cls, obj: object, callback: Any, key: Hashable) -> _KeyedRef:
        self = super().__new__(cls, obj, callback)
        self.key = key
        return self

    def __init__(self, obj: object, callback: Any, key: Hashable) -> None:
        super().__init__(obj, callback)


class WeakInternTable:
    """A map from structural keys to live objects, holding the objects weakly.

    Args:
        name: what the table holds, for ``intern_stats``.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.RLock()
        self.created = 0
        self._entries: dict[Hashable, _KeyedRef] = {}
        entries = self._entries
        lock = self.lock

        def remove(ref: _KeyedRef) -> None:
            with lock:
                if entries.get(ref.key) is ref:
                    del entries[ref.key]

        self._remove = remove

    def lookup(self, key: Hashable) -> Any:
        """The live object stored under ``key``, or ``None``."""
        ref = self._entries.get(key)
        return None if ref is None else ref()

    def store(self, key: Hashable, obj: object) -> None:
        """Store ``obj`` under ``key``. Call with ``self.lock`` held, after ``lookup``."""
        self._entries[key] = _KeyedRef(obj, self._remove, key)
        self.created += 1

    def __len__(self) -> int:
        with self.lock:
            return sum(1 for ref in self._entries.values() if ref() is not None)


@dataclass(frozen=True)
class InternStats:
    """Counters of the intern tables.

    Attributes:
        applies_created: Apply nodes ever created (a hit in the table creates none).
        applies_live: Apply nodes alive now.
        constants_created: constants ever created.
        constants_live: constants alive now.
    """

    applies_created: int
    applies_live: int
    constants_created: int
    constants_live: int


APPLIES = WeakInternTable("apply")
CONSTANTS = WeakInternTable("constant")


def intern_stats() -> InternStats:
    """A snapshot of the intern tables' counters (for tests and benchmarks).

    Example:
        >>> before = intern_stats().applies_created
    """
    return InternStats(
        applies_created=APPLIES.created,
        applies_live=len(APPLIES),
        constants_created=CONSTANTS.created,
        constants_live=len(CONSTANTS),
    )
