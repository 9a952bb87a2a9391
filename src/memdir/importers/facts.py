"""One imported fact (a bullet, an observation, a mem0 record) in the reference's memory form.

The form is extraction's (:mod:`memdir.extract.form`): a name that states the fact in its first
words, a description that says when it matters, and for feedback and project memories a
**How to apply:** line built from the fact itself; **Why:** is the source's own reason when it
gives one, and always says where the fact came from, so every memory is traceable.
"""

from __future__ import annotations

from collections.abc import Mapping

from memdir.extract.form import how_to_apply
from memdir.extract.rules import Candidate, infer_type
from memdir.importers.base import Item, first_sentence, one_line, title_of
from memdir.model import MemoryType
from memdir.sameness import normalise

_WHEN = {
    MemoryType.USER: "Who the user is and how they work; pitch answers and choices to it",
    MemoryType.FEEDBACK: "A standing instruction; follow it whenever the work it names comes up",
    MemoryType.PROJECT: "A fact about the project; rely on it when work touches",
    MemoryType.REFERENCE: "Where to look; use it when work needs",
}


def describe(type_: MemoryType, name: str, fact: str) -> str:
    """A description that says when the memory matters: the fact's first sentence when the name
    does not already say all of it, else the type's "when" with the name."""
    sentence = first_sentence(fact, 150)
    if normalise(sentence) and normalise(sentence) != normalise(name):
        return sentence
    hook = _WHEN[type_]
    if type_ in (MemoryType.PROJECT, MemoryType.REFERENCE):
        return one_line(f"{hook} {name[0].lower() + name[1:]}", 150)
    return one_line(f"{hook}: {sentence}", 150)


def fact_item(
    source: str,
    source_id: str,
    fact: str,
    *,
    origin: str,
    type_: MemoryType | None = None,
    name: str | None = None,
    why: str | None = None,
    created: str | None = None,
    extra: Mapping[str, object] | None = None,
) -> Item:
    """An :class:`Item` for one fact; ``origin`` says where it was found (for **Why:**)."""
    text = " ".join(fact.split())
    kind = type_ or infer_type(text)
    title = name or title_of(text)
    candidate = Candidate("save", kind, text, why, "import", text, name=title)
    lines = [text if text.endswith((".", "!", "?")) else text + "."]
    reason = (why.rstrip(".") + ". " if why else "") + f"Imported from {origin}."
    lines += ["", f"**Why:** {reason}"]
    if how := how_to_apply(candidate):
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
