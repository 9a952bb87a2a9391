"""What dream does offline with a memory the code has outgrown: re-anchor moved files, mark the
rest (``stale_refs``) for a person or the model dream to decide.

Invariant: a memory's text is rewritten only when every anchor it relies on is current but for
files git saw renamed — then the old path becomes the new one and ``verified`` moves to HEAD. Any
other change (a definition that changed, an identifier that is gone) is a question about what
the memory *means*, which rules cannot answer: the memory is marked, not rewritten.
"""

from __future__ import annotations

import re

from memdir.evidence.verdict import Evidence


def reanchored(body: str, evidence: Evidence) -> tuple[str, list[tuple[str, str]]] | None:
    """(``body`` with each moved path replaced by where it lives now, the (old, new) pairs), or
    None when the memory needs more than that."""
    moves: list[tuple[str, str]] = []
    for v in evidence.verdicts:
        if not v.depends or v.state in ("current", "unchecked"):
            continue
        if v.kind != "path" or v.state != "moved" or not v.detail.startswith("now "):
            return None
        moves.append((v.anchor.rstrip("/"), v.detail.removeprefix("now ").strip()))
    if not moves:
        return None
    for old, new in moves:
        body = re.sub(rf"(?<![\w/.-]){re.escape(old)}(?![\w-]|\.\w)", new, body)
    return body, moves


def marks(evidence: Evidence) -> list[str]:
    """The anchors to list in ``stale_refs``: what the memory relies on that is not current."""
    return [
        v.anchor for v in evidence.verdicts if v.depends and v.state in ("gone", "moved", "changed")
    ]


__all__ = ["marks", "reanchored"]
