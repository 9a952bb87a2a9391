"""One imported fact (a bullet, an observation, a mem0 record) in the reference's memory form.

The form is extraction's (:mod:`memdir.extract.form`): a name that states the fact in its first
words, a description that says when it matters; **Why:** is the source's own reason when it
gives one, and always says where the fact came from, so every memory is traceable. **How to
apply:** is written only when the source says how: one built from the fact by rules read as
noise ("Rely on this whenever work touches forget the earlier note that I").
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memdir.extract.rules import infer_type
from memdir.importers.base import Item, first_sentence, one_line, title_of
from memdir.model import MemoryType

_WHEN = {
    MemoryType.USER: "Who the user is",
    MemoryType.FEEDBACK: "A standing instruction",
    MemoryType.PROJECT: "A fact about the project",
    MemoryType.REFERENCE: "Where to look",
}


def describe(type_: MemoryType, name: str, fact: str) -> str:
    """A description that says when the memory matters: the fact's own first sentence (what a
    recall reads to decide), else the type's "when" with the name."""
    sentence = first_sentence(fact, 150)
    if sentence:
        return sentence
    return one_line(f"{_WHEN[type_]}: {name}", 150)


_STANDING = re.compile(
    r"^(?:when|whenever|every time|each time|at the end of every|for all|for every|before|after)\b"
    r"|^(?:the )?user (?:prefers|wants|likes|hates|dislikes|asks|expects)\b|\bI will\b"
    # a rule someone stated: "Integration tests must use the real PostgreSQL, never mocks"
    r"|\bmust(?: not)?\b|\bmustn't\b|^(?:never|always|do not|don't)\b",
    re.IGNORECASE,
)
_ABOUT_USER = re.compile(
    r"^(?:the )?user(?:'s)? (?:is|has|works|knows|runs|uses|lives|name)\b", re.I
)


def fact_type(text: str) -> MemoryType:
    """Extraction's type cues, plus the forms other tools write facts in: a trigger ("When the
    user says X, ...", "I will ...") or a stated preference is feedback; "The user is ..." is
    about the user."""
    if _STANDING.search(text):
        return MemoryType.FEEDBACK
    if _ABOUT_USER.match(text):
        return MemoryType.USER
    return infer_type(text)


def fact_item(
    source: str,
    source_id: str,
    fact: str,
    *,
    origin: str,
    type_: MemoryType | None = None,
    name: str | None = None,
    why: str | None = None,
    how: str | None = None,
    created: str | None = None,
    extra: Mapping[str, object] | None = None,
) -> Item:
    """An :class:`Item` for one fact; ``origin`` says where it was found (for **Why:**)."""
    text = " ".join(fact.split())
    kind = type_ or fact_type(text)
    title = name or title_of(text)
    lines = [text if text.endswith((".", "!", "?")) else text + "."]
    reason = (why.rstrip(".") + ". " if why else "") + f"Imported from {origin}."
    lines += ["", f"**Why:** {reason}"]
    if how:  # only what the source says: one made up from the fact read as noise (issue #39.9)
        lines += ["", f"**How to apply:** {how}"]
    return Item(
        source=source,
        source_id=source_id,
        type=kind,
        name=one_line(title, 100),
        description=describe(kind, title, text),
        body="\n".join(lines) + "\n",
        created=created,
        fact=text,
        extra=dict(extra or {}),
    )
