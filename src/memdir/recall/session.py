"""Per-session recall state: what was already surfaced or read, and the session's byte budget.

Invariants: a memory surfaced (or read by the agent) in this session is never surfaced again;
the sum of surfaced attachment sizes stops growing past 60 KiB. Compaction drops the old
attachments from the context, so :meth:`RecallSession.reset_budget` starts the count afresh.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memdir.recall.surface import Attachment

SESSION_BUDGET_BYTES = 60 * 1024


def _key(path: Path | str) -> str:
    return str(Path(path).resolve())


@dataclass
class RecallSession:
    budget_bytes: int = SESSION_BUDGET_BYTES
    surfaced: set[str] = field(default_factory=set)
    used_bytes: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def seen(self, path: Path | str) -> bool:
        return _key(path) in self.surfaced

    def mark_read(self, paths: Iterable[Path | str]) -> None:
        """Files the agent already has in context (read with a tool) are not surfaced again."""
        with self._lock:
            self.surfaced.update(_key(p) for p in paths)

    @property
    def exhausted(self) -> bool:
        return self.used_bytes >= self.budget_bytes

    def accept(self, attachments: Iterable[Attachment]) -> list[Attachment]:
        """Keep the attachments not seen before and within budget; record them as surfaced."""
        kept: list[Attachment] = []
        with self._lock:
            for attachment in attachments:
                key = _key(attachment.path)
                if key in self.surfaced or self.used_bytes >= self.budget_bytes:
                    continue
                self.surfaced.add(key)
                self.used_bytes += attachment.size
                kept.append(attachment)
        return kept

    def reset_budget(self) -> None:
        with self._lock:
            self.used_bytes = 0
