"""What dream has distilled from the daily logs (:mod:`memdir.daily_log`).

Invariant: what a dream has distilled is recorded per bullet (a hash of the log file and the
bullet's text) in ``logs/.distilled.json``, so a bullet is distilled once, even if someone edits
an earlier line of the log or the same text appears on another day.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from memdir.atomic import atomic_write
from memdir.daily_log import Bullet, bullets, log_files

DISTILLED_NAME = "logs/.distilled.json"


class DistilledRecord:
    """The set of bullet keys already distilled, stored in ``logs/.distilled.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / DISTILLED_NAME
        self.keys: set[str] = set()
        try:
            data = json.loads(self.path.read_text("utf-8"))
            if isinstance(data, dict) and isinstance(data.get("distilled"), list):
                self.keys = {str(k) for k in data["distilled"]}
        except (OSError, ValueError):
            pass  # no record yet (or a damaged one: distilling again is safe, just slower)

    def pending(self) -> list[Bullet]:
        """Every bullet of every log that has not been distilled yet, oldest first."""
        return [
            b
            for rel, day in log_files(self.root)
            for b in bullets(self.root, rel, day)
            if b.key not in self.keys
        ]

    def mark(self, done: Iterable[Bullet]) -> None:
        self.keys.update(b.key for b in done)

    def save(self) -> None:
        payload = {"version": 1, "distilled": sorted(self.keys)}
        atomic_write(self.path, json.dumps(payload, indent=0))
