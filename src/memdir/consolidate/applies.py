"""Dream keeps ``applies_when`` current: filled where missing, refreshed where the dream rewrote.

Directories written before the field existed have memories without it, and a memory the dream
merges lines into or re-dates may now govern more than its list says. Each dream therefore:

- offline (:func:`by_rules`, planned with the rest of the offline dream): fills the rules' list
  into current memories that have none, and recomputes it in memories the plan rewrote when the
  stored list is the rules' own (recognised by recomputing it from the text before the dream);
- with a model (:func:`with_model`, after the LLM dream's run): asks the model for the memories
  the run changed and then for memories with no list, and stores its answer
  (:func:`memdir.recall.applies_model.write_with_model`).

Invariants: a list a person wrote is never replaced (nor a model's list by the rules); at most
``RULES_PER_RUN`` / ``MODEL_PER_RUN`` memories per dream, so a large old dir is filled over a
few dreams; only the ``applies_when`` lines change (:func:`memdir.frontmatter.with_keys`: the
rest of the header and the body stay byte for byte, ``updated`` included); and every write goes
through the dream's own guards: the offline plan is re-checked against the files under the
store lock before it is applied, and a model's list is written only if the file still holds the
text the model was shown (``expected_hash``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterable, Sequence

from memdir import applies_when, frontmatter
from memdir.errors import MemdirError
from memdir.llm.base import Provider
from memdir.model import Memory
from memdir.recall.applies_model import ModelReport, write_with_model, written_by_person
from memdir.store import MemoryStore
from memdir.validity import validity_of

RULES_PER_RUN = 200  # rules are cheap; the bound keeps one dream's diff reviewable
MODEL_PER_RUN = 8  # one model call each, in the background after the dream's own run
REASON_FILLED = "applies_when written by rules"
REASON_REFRESHED = "applies_when refreshed by rules after the rewrite"


def _memory(rel: str, text: str) -> Memory | None:
    try:
        parsed = frontmatter.parse(text, lenient=True)
    except MemdirError:
        return None
    return None if parsed.repair is not None else frontmatter.to_memory(rel, parsed)


def _rules(memory: Memory) -> list[str]:
    return applies_when.derive(memory.type, memory.name, memory.description, memory.body)


def rules_text(rel: str, before: str, now: str) -> tuple[str, str] | None:
    """(new text, reason) for one memory, or None to leave it (see module).

    ``before``: the file as the dream found it; ``now``: as the dream's plan leaves it.
    """
    memory = _memory(rel, now)
    if memory is None:
        return None
    stored = applies_when.stored(memory)
    if not stored:
        found, reason = _rules(memory), REASON_FILLED
    else:
        old = _memory(rel, before) if before != now else None
        if old is None or applies_when.marked(memory) or stored != _rules(old):
            return None  # unchanged, a model's or the agent's list, or a person's list
        found, reason = _rules(memory), REASON_REFRESHED
    if found == stored or (not found and not stored):
        return None
    try:
        return frontmatter.with_keys(now, {applies_when.FIELD: found or None}), reason
    except MemdirError:  # a header too unusual to edit by lines: left for a person
        return None


def by_rules(
    memories: Iterable[tuple[str, str, str]], limit: int | None = None
) -> dict[str, tuple[str, str]]:
    """rel → (new text, reason) for the first ``limit`` (default ``RULES_PER_RUN``) of
    (rel, before, now) that need it."""
    bound = RULES_PER_RUN if limit is None else limit
    out: dict[str, tuple[str, str]] = {}
    for rel, before, now in memories:
        if len(out) >= bound:
            break
        found = rules_text(rel, before, now)
        if found is not None:
            out[rel] = found
    return out


def model_candidates(
    store: MemoryStore, changed: Sequence[str], limit: int = MODEL_PER_RUN
) -> list[str]:
    """What a model dream asks about: current memories it changed (unless a person wrote their
    list), then current memories with no list, newest first; at most ``limit``."""
    out: list[str] = []
    today = dt.date.today()
    seen = [*dict.fromkeys(changed), *(h.filename for h in store.scan(limit=None).headers)]
    for rel in dict.fromkeys(seen):
        if len(out) >= limit:
            break
        try:
            memory = store.read(rel)
        except (MemdirError, OSError):
            continue  # gone or unreadable: nothing to index
        if not validity_of(memory.extra).is_current(today) or written_by_person(memory):
            continue
        if rel in changed or not applies_when.stored(memory):
            out.append(rel)
    return out


async def with_model(
    store: MemoryStore, provider: Provider, changed: Sequence[str], limit: int = MODEL_PER_RUN
) -> ModelReport:
    """Ask ``provider`` for the lists of :func:`model_candidates` (read off the event loop)."""
    rels = await asyncio.to_thread(model_candidates, store, changed, limit)
    return await write_with_model(store, provider, rels)


__all__ = [
    "MODEL_PER_RUN",
    "RULES_PER_RUN",
    "by_rules",
    "model_candidates",
    "rules_text",
    "with_model",
]
