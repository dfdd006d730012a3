"""Weak intern tables: one live object per key, freed when nothing else refers to it.

A ``WeakInternTable`` holds buckets, one per *head* (for Apply nodes, the Op), each a dict
from a key (the input tuple) to a weak reference. The head's bucket is found once and can
be cached by the caller, so a lookup is one ``dict.get`` on a tuple of identity-hashed
Vars, with no Python-level hashing. Lookups take no lock (``dict.get`` is atomic);
insertion happens under a re-entrant lock after a second look, so concurrent construction
of the same node from several threads gives one object. An entry removes itself when its
object dies (the weak reference's callback), and only if the entry is still the one the
callback belongs to.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

__all__ = ["InternStats", "WeakInternTable", "intern_stats"]

Bucket = dict[Hashable, "_KeyedRef"]


class _KeyedRef(weakref.ref):  # type: ignore[type-arg]
    """A weak reference that remembers where it is stored (set after construction)."""

    __slots__ = ("bucket", "key")
    bucket: Bucket
    key: Hashable


class WeakInternTable:
    """Buckets of weakly held objects, looked up by head and then by key.

    Args:
        name: what the table holds, for messages.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.RLock()
        self.created = 0
        self._heads: dict[Hashable, tuple[Any, Bucket]] = {}
        lock = self.lock

        def remove(ref: _KeyedRef) -> None:
            with lock:
                if ref.bucket.get(ref.key) is ref:
                    del ref.bucket[ref.key]

        self._remove = remove

    def bucket(self, head: Hashable) -> tuple[Any, Bucket]:
        """The canonical object equal to ``head`` and its bucket. Heads are kept forever."""
        found = self._heads.get(head)
        if found is None:
            with self.lock:
                found = self._heads.setdefault(head, (head, {}))
        return found

    @staticmethod
    def lookup(bucket: Bucket, key: Hashable) -> Any:
        """The live object stored under ``key`` in ``bucket``, or ``None``."""
        ref = bucket.get(key)
        return None if ref is None else ref()

    def intern(self, bucket: Bucket, key: Hashable, obj: Any) -> Any:
        """Store ``obj`` under ``key`` unless a live object is there; return the one kept.

        The common case takes no lock: ``dict.setdefault`` is atomic for keys whose hash and
        equality run no Python code (tuples of identity-hashed nodes, bytes, ints). Only a
        dead entry, not yet removed by its callback, is replaced under the lock.
        """
        ref = _KeyedRef(obj, self._remove)
        ref.bucket = bucket
        ref.key = key
        found = bucket.setdefault(key, ref)
        if found is not ref:
            with self.lock:
                found = bucket.get(key)
                existing = None if found is None else found()
                if existing is not None:
                    return existing
                bucket[key] = ref
        self.created += 1  # exact when one thread builds at a time
        return obj

    def __len__(self) -> int:
        with self.lock:
            return sum(
                1
                for _, bucket in self._heads.values()
                for ref in bucket.values()
                if ref() is not None
            )


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
