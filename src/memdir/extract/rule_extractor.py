"""Apply rule-recognised statements to the memory store: create, update instead of duplicate,
forget.

Invariants:

* Only user-authored text is read (text blocks of user messages; tool results and injected
  ``<tag>…</tag>`` blocks are not the user speaking).
* Every change goes through :class:`~memdir.store.MemoryStore` (atomic, locked, guarded,
  indexed). A statement whose content already exists (same normalised text, or high token overlap
  with a memory of the same type) updates that memory instead of adding a near-duplicate; an
  identical one changes nothing.
* "Forget …" deletes only memories that share most of the target's content words; when nothing
  matches well enough, nothing is deleted (a missed forget is recoverable, a wrong delete is not).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir import applies_when
from memdir.errors import MemdirError, SecretFoundError
from memdir.extract.base import ExtractionResult, unique_written
from memdir.extract.rules import Candidate, candidates
from memdir.extract.session_rules import session_candidates
from memdir.llm.base import Message
from memdir.model import Memory, MemoryType
from memdir.store import MemoryStore, slugify

log = logging.getLogger(__name__)

DUPLICATE_OVERLAP = 0.85  # this similar: already known, no write
UPDATE_OVERLAP = 0.5  # this similar (same type): the new statement replaces the old
FORGET_COVERAGE = 0.6  # share of the target's words a memory must contain to be forgotten

_STOP_WORDS = (
    "a an the and or but to of in on at for with is are was were be been it its this that "
    "these those i me my we our you your they them their user users s please always"
)
_STOP = frozenset(_STOP_WORDS.split(" "))


def tokens(text: str) -> frozenset[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return frozenset(w.removesuffix("s") if len(w) > 3 else w for w in words if w not in _STOP)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@dataclass(frozen=True, slots=True)
class _Known:
    rel: str
    type: str | None
    words: frozenset[str]  # of the description: what dedupe compares
    all_words: frozenset[str]  # of name, description, body and file name: what forget matches


def user_texts(messages: Sequence[Message]) -> list[str]:
    return [m.text for m in messages if m.role == "user" and m.text.strip()]


class RuleExtractor:
    """The offline extractor: explicit statements only (see :mod:`memdir.extract.rules`)."""

    def __init__(
        self, store: MemoryStore, *, clock: Callable[[], dt.datetime] | None = None
    ) -> None:
        self.store = store
        self._clock = clock or (lambda: dt.datetime.now().astimezone())

    async def extract(self, messages: Sequence[Message], *, new_messages: int) -> ExtractionResult:
        since = len(messages) - new_messages if new_messages > 0 else len(messages)
        return await asyncio.to_thread(self.apply_messages, messages, since=max(0, since))

    def apply_messages(self, messages: Sequence[Message], *, since: int = 0) -> ExtractionResult:
        """Sentence rules on the user's words from ``since`` on, then the session rules over the
        whole run for evidence that ends there (:mod:`memdir.extract.session_rules`)."""
        today = self._clock().date()
        recent = user_texts(messages[since:])
        found = [c for text in recent for c in candidates(text, today=today)]
        return self.apply([*found, *session_candidates(messages, since=since)])

    def apply_texts(self, texts: Sequence[str]) -> ExtractionResult:
        today = self._clock().date()
        found = [c for text in texts for c in candidates(text, today=today)]
        return self.apply(found)

    def apply(self, found: Sequence[Candidate]) -> ExtractionResult:
        written: list[Path] = []
        removed: list[Path] = []
        if found:  # read the existing memories once, and only when there is something to do
            known = self._known()
            for candidate in found:
                if candidate.kind == "forget":
                    removed.extend(self._forget(candidate.statement, known))
                else:
                    try:
                        path = self._save(candidate, known)
                    except SecretFoundError as exc:  # a guard said no: skip it, save the rest
                        log.warning("not saved: %s", exc)  # labels only, never the value
                        continue
                    if path is not None:
                        written.append(path)
        written = [p for p in unique_written(written) if p.exists()]
        return ExtractionResult(self.store.root, written=written, removed=removed)

    def _known(self) -> dict[str, _Known]:
        known = {}
        for header in self.store.list():
            try:
                memory = self.store.read(header.filename)
            except MemdirError:  # an unreadable file is doctor's business, not a reason to stop
                continue
            known[header.filename] = _known(header.filename, memory)
        return known

    def _save(self, candidate: Candidate, known: dict[str, _Known]) -> Path | None:
        assert candidate.type is not None
        words = tokens(candidate.statement)
        best: tuple[float, _Known] | None = None
        for entry in known.values():
            score = overlap(words, entry.words)
            if best is None or score > best[0]:
                best = (score, entry)
        if best is not None and best[0] >= DUPLICATE_OVERLAP:
            return None
        body = _body(candidate, self._clock().date())
        if best is not None and best[0] >= UPDATE_OVERLAP and best[1].type == candidate.type:
            rel = best[1].rel

            def replace(memory: Memory) -> Memory:
                memory.description = _one_line(candidate.statement)
                memory.body = body
                return applies_when.with_applies_when(memory)

            known[rel] = _known(rel, self.store.update(rel, replace))
            return self.store.root / rel
        name = _title(candidate.statement)
        slug = slugify(name).removeprefix(f"{candidate.type.value}_")  # no "user_user_is_..."
        rel = self._free_name(f"{candidate.type.value}_{slug[:48].rstrip('_')}")
        statement = _one_line(candidate.statement)
        situations = applies_when.initial(candidate.type.value, name, statement, body)
        memory = self.store.create(name, statement, candidate.type, body, rel=rel, extra=situations)
        known[rel] = _known(rel, memory)
        return self.store.root / rel

    def _free_name(self, stem: str) -> str:
        rel, n = f"{stem}.md", 2
        while self.store.exists(rel):
            rel, n = f"{stem}_{n}.md", n + 1
        return rel

    def _forget(self, target: str, known: dict[str, _Known]) -> list[Path]:
        wanted = tokens(target)
        if not wanted:
            return []
        removed = []
        for entry in list(known.values()):
            if len(wanted & entry.all_words) / len(wanted) >= FORGET_COVERAGE:
                self.store.delete(entry.rel)
                del known[entry.rel]
                removed.append(self.store.root / entry.rel)
        return removed


def _known(rel: str, memory: Memory) -> _Known:
    text = f"{memory.name}\n{memory.description}\n{memory.body}\n{rel.replace('_', ' ')}"
    return _Known(rel, memory.type, tokens(memory.description), tokens(text))


def _one_line(text: str, limit: int = 150) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"


def _title(statement: str) -> str:
    words = statement.split()
    title = " ".join(words[:7]).rstrip(",;:.")
    return title + ("…" if len(words) > 7 else "")


def _body(candidate: Candidate, today: dt.date) -> str:
    said = f"the user said so explicitly on {today.isoformat()}"
    if candidate.rule == "proven-fix":
        said = "the session showed it"
    lines = [candidate.statement.rstrip(".") + "."]
    if candidate.type in (MemoryType.FEEDBACK, MemoryType.PROJECT):
        how = (
            "follow this in future work without being reminded"
            if candidate.type is MemoryType.FEEDBACK
            else "take this into account when planning or suggesting work"
        )
        lines += ["", f"**Why:** {candidate.why or said}.", f"**How to apply:** {how}."]
    elif candidate.why:
        lines += ["", f"**Why:** {candidate.why}."]
    lines += ["", f'_Source: "{_one_line(candidate.source, 300)}" ({today.isoformat()})_']
    return "\n".join(lines) + "\n"
