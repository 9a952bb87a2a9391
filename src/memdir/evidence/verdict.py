"""The evidence types: one verdict per anchor, and what they mean for the memory.

States: ``current`` (as when the memory was written or last confirmed), ``changed`` (what it
names changed in substance since: the anchored definition, not the file's bytes), ``moved`` (it
lives elsewhere now: ``detail`` says where), ``gone`` (no such path; the identifier appears in no
tracked file), ``unchecked`` (the check ran out of time or git could not answer).

Invariant: a memory is held back only for a ``gone`` anchor it relies on (``depends``); "never
add `psycopg2` back" names psycopg2 to rule it out and stays served when psycopg2 is gone.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

STATES = ("current", "changed", "moved", "gone", "unchecked")


@dataclass(frozen=True, slots=True)
class Verdict:
    anchor: str
    kind: str
    state: str
    detail: str = ""
    depends: bool = True

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Verdict:
        return cls(
            str(raw["anchor"]),
            str(raw["kind"]),
            str(raw["state"]),
            str(raw.get("detail", "")),
            bool(raw.get("depends", True)),
        )


@dataclass
class Evidence:
    """A memory's verdicts against one state of its repository."""

    verdicts: list[Verdict] = field(default_factory=list)
    base: str | None = None  # the commit the memory is compared from
    skipped: list[str] = field(default_factory=list)  # what was not checked, and why

    @property
    def held_back(self) -> bool:
        return any(v.state == "gone" and v.depends for v in self.verdicts)

    @property
    def outdated(self) -> bool:
        """What it names is gone or lives elsewhere now: the memory's claim no longer reads true
        as written (a ``changed`` definition may still fit it: that one is a caveat)."""
        return any(v.state in ("moved", "gone") and v.depends for v in self.verdicts)

    @property
    def stale(self) -> bool:
        """Some anchor the memory relies on is no longer as it was."""
        return any(v.state in ("changed", "moved", "gone") and v.depends for v in self.verdicts)

    @property
    def state(self) -> str:
        """The worst verdict: gone > moved > changed > unchecked > current ('' for none)."""
        for state in ("gone", "moved", "changed", "unchecked", "current"):
            if any(v.state == state and (v.depends or state == "current") for v in self.verdicts):
                return state
        return "current" if self.verdicts else ""

    def note(self, title: str, filename: str) -> str:
        """One line for a held-back memory (what the agent gets instead of the memory)."""
        gone = [v for v in self.verdicts if v.state == "gone" and v.depends]
        named = ", ".join(f"`{v.anchor}`" for v in gone[:3])
        return (
            f'memdir held back the memory "{title}" ({filename}): it relies on {named}, which '
            "is no longer in the repository. Check the code before acting on it; fix the memory "
            f"or confirm it (`memdir stale --confirm {filename}`), or retire it."
        )

    def caveat(self) -> str:
        """One line for a memory served with changed or moved anchors ('' when none)."""
        parts = []
        for v in self.verdicts:
            if v.depends and v.state in ("changed", "moved"):
                parts.append(f"`{v.anchor}` {v.state}" + (f" ({v.detail})" if v.detail else ""))
        if not parts:
            return ""
        return (
            "[memdir evidence: " + "; ".join(parts[:3]) + " since this memory was written — verify]"
        )

    def shown(self, content: str, title: str, filename: str) -> str:
        """What every surface injects in place of the memory's ``content``: the note when it is
        held back, the content with its caveat when something it names changed or moved."""
        if self.held_back:
            return self.note(title, filename)
        caveat = self.caveat()
        return f"{content.rstrip()}\n{caveat}" if caveat else content

    def to_json(self) -> dict[str, Any]:
        return {
            "verdicts": [v.to_json() for v in self.verdicts],
            "base": self.base,
            "skipped": self.skipped,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Evidence:
        return cls(
            [Verdict.from_json(v) for v in raw.get("verdicts", [])],
            raw.get("base"),
            [str(s) for s in raw.get("skipped", [])],
        )

    def report(self) -> list[dict[str, Any]]:
        """``[{"anchor", "kind", "state", "detail"}]``: what ``--json`` recall carries."""
        return [
            {"anchor": v.anchor, "kind": v.kind, "state": v.state, "detail": v.detail,
             "depends": v.depends}
            for v in self.verdicts
        ]  # fmt: skip


__all__ = ["STATES", "Evidence", "Verdict"]
