"""``applies_when`` written by a model, off the prompt path.

The offline rules (:mod:`memdir.applies_when`) know the situations their cue lists name; a model
knows that "bring lodash into the admin console" is adding a dependency. When a provider is
configured, :func:`write_with_model` asks it, one memory per call, for the situations and
trigger words the memory governs, and stores its own list (at most ``applies_when.MAX_ITEMS``)
in the memory's frontmatter. Recall reads the rules' situations before it
(:func:`memdir.applies_when.for_recall`), so the model extends what the rules found instead of
replacing it. Measured with SmolLM2-135M (docs/benchmarks.md), a model's list that replaced the
rules' surfaced the right memory for 0.07 of the no-shared-word requests (rules: 0.56); the
model's items after the rules' kept the rules' 0.56.

Invariants:
- Never on the prompt path: callers run it in the background (``memdir reindex --model``, the
  runtime's task board) and recall reads whatever is stored when it next refreshes.
- A failure is per memory and never raises: a provider error, a bad reply or a file that
  changed while the model was asked (it is written only if it still holds the text the model
  saw) leaves that memory's field as it was (the rules' list or nothing), and the result says
  why. Only the field's lines change: the rest of the file stays byte for byte.
- A list a person wrote is not overwritten unless asked (``overwrite=True``): a model's list is
  marked with ``applies_when_by: model`` and the rules' list is recognised by recomputing it, so
  the next run knows it may refresh those.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from memdir import applies_when, frontmatter
from memdir.atomic import content_hash
from memdir.errors import ConflictError, MemdirError
from memdir.llm.base import CompletionRequest, Message, Provider
from memdir.model import Memory
from memdir.store import MemoryStore

log = logging.getLogger(__name__)

BY_FIELD = applies_when.BY_FIELD
SYSTEM = (
    "You index an AI coding assistant's memories. For the memory given, list the situations in "
    "which the assistant must recall it: the kinds of user requests and tasks it governs, in the "
    "words a user would use for such a request (verbs and objects, e.g. 'adding or installing a "
    "JavaScript dependency', 'deleting git branches', 'explaining a programming concept'), "
    "including requests that never name the memory's own terms. Give 3 to 8 short situations. "
    "Reply with JSON only."
)
SCHEMA = {
    "type": "object",
    "properties": {
        "applies_when": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
    },
    "required": ["applies_when"],
}


@dataclass
class ModelReport:
    """What one run wrote (memory → situations) and what it skipped, with the reason."""

    written: dict[str, list[str]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def _prompt(memory: Memory) -> str:
    return (
        f"type: {memory.type or 'untyped'}\nname: {memory.name}\n"
        f"description: {memory.description}\n\n{memory.body[:2000]}"
    )


async def situations_from_model(
    provider: Provider, memory: Memory, *, timeout: float | None = 30.0
) -> list[str]:
    """The model's situations for ``memory`` (raises the provider's errors)."""
    request = CompletionRequest(
        system=SYSTEM,
        messages=[Message("user", _prompt(memory))],
        max_tokens=400,
        json_schema=SCHEMA,
        temperature=0.0,
        timeout=timeout,
    )
    completion = await provider.complete(request)
    value = completion.parsed_json
    if not isinstance(value, dict):
        return []
    return applies_when.normalise(value.get(applies_when.FIELD))


async def write_with_model(
    store: MemoryStore,
    provider: Provider,
    rels: Sequence[str],
    *,
    overwrite: bool = False,
    timeout: float | None = 30.0,
) -> ModelReport:
    """Ask the model for each memory in ``rels`` and store its list (see module)."""
    report = ModelReport()
    for rel in rels:
        try:
            text = store.read_text(rel)
            memory = frontmatter.parse_memory(text, store.rel(rel))
        except (MemdirError, OSError) as exc:
            report.skipped[rel] = f"unreadable: {exc}"
            continue
        if written_by_person(memory) and not overwrite:
            report.skipped[rel] = "a person or the saving agent wrote its applies_when"
            continue
        try:
            situations = await situations_from_model(provider, memory, timeout=timeout)
        except Exception as exc:  # advisory: a model failure must not stop the others
            log.warning("applies_when for %s: model failed: %s", rel, exc)
            report.skipped[rel] = f"model failed: {type(exc).__name__}"
            continue
        if not situations:
            report.skipped[rel] = "the model gave no situations"
            continue
        try:
            _store(store, rel, text, situations)
        except ConflictError:
            report.skipped[rel] = "changed while the model was asked"
            continue
        except (MemdirError, OSError) as exc:
            report.skipped[rel] = f"not written: {exc}"
            continue
        report.written[rel] = situations
    return report


def written_by_person(memory: Memory) -> bool:
    """A stored list a model run must leave: a person's (unmarked and not the rules' own list,
    recomputed) or the saving agent's (marked ``agent``: a capable model that saw the
    conversation, which a background model is not expected to improve on)."""
    found, mark = applies_when.stored(memory), applies_when.marked(memory)
    if not found or mark == applies_when.BY_MODEL:
        return False
    if mark == applies_when.BY_AGENT:
        return True
    return found != applies_when.derive(memory.type, memory.name, memory.description, memory.body)


def _store(store: MemoryStore, rel: str, text: str, situations: list[str]) -> None:
    """Only the two fields' lines change (the rest of the header, ``updated`` included, and the
    body stay byte for byte), and only if the file still holds the text the model was shown."""
    fields = {applies_when.FIELD: situations, BY_FIELD: applies_when.BY_MODEL}
    store.write_text(
        rel,
        frontmatter.with_keys(text, fields),
        expected_hash=content_hash(text),
    )


__all__ = [
    "BY_FIELD",
    "ModelReport",
    "situations_from_model",
    "write_with_model",
    "written_by_person",
]
