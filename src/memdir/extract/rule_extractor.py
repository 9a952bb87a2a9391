"""Apply rule-recognised statements to the memory store: create, update instead of duplicate,
forget.

Invariants:

* Only user-authored text is read (text blocks of user messages; tool results and injected
  ``<tag>…</tag>`` blocks are not the user speaking).
* Every change goes through :class:`~memdir.store.MemoryStore` (atomic, locked, guarded,
  indexed).
* One lesson, one memory: before writing, a statement is matched against every existing memory
  with :func:`memdir.sameness.find_same` (the notion dream merges by). The same memory — this
  lesson from another session, a near duplicate, one a person wrote — gets the new evidence line
  (:func:`memdir.extract.form.with_evidence`) instead of a new file; evidence it already holds
  changes nothing, so a second run over the same messages writes nothing. Only a memory these
  rules wrote (``saved_by: rules`` in its header) may be reworded, when the user restates or
  corrects it (a person who edits such a memory and wants their words kept deletes that key);
  a person's wording is never changed.
* "Forget …" deletes only memories that share most of the target's content words; when nothing
  matches well enough, nothing is deleted (a missed forget is recoverable, a wrong delete is not).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from memdir import applies_when
from memdir.errors import MemdirError, SecretFoundError
from memdir.extract import form
from memdir.extract.base import ExtractionResult, unique_written
from memdir.extract.rules import Candidate, candidates
from memdir.extract.said import user_words
from memdir.extract.session_rules import session_lessons, session_sightings
from memdir.extract.sightings import across_sessions
from memdir.llm.base import Message
from memdir.model import Memory
from memdir.sameness import Doc, closest, make_doc
from memdir.store import MemoryStore, slugify

log = logging.getLogger(__name__)

SAVED_BY = "saved_by"  # header key marking a memory these rules wrote (it may be reworded)
OURS = "rules"
FORGET_COVERAGE = 0.6  # share of the target's words a memory must contain to be forgotten

_STOP_WORDS = (
    "a an the and or but to of in on at for with is are was were be been it its this that "
    "these those i me my we our you your they them their user users s please always"
)
_STOP = frozenset(_STOP_WORDS.split(" "))


def tokens(text: str) -> frozenset[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return frozenset(w.removesuffix("s") if len(w) > 3 else w for w in words if w not in _STOP)


@dataclass(frozen=True, slots=True)
class _Known:
    rel: str
    memory: Memory
    doc: Doc  # what "the same memory" compares (memdir.sameness), evidence left out
    all_words: frozenset[str]  # of name, description, body and file name: what forget matches

    @property
    def ours(self) -> bool:
        return self.memory.extra.get(SAVED_BY) == OURS


class RuleExtractor:
    """The offline extractor: explicit statements only (see :mod:`memdir.extract.rules`)."""

    def __init__(
        self, store: MemoryStore, *, clock: Callable[[], dt.datetime] | None = None
    ) -> None:
        self.store = store
        self._clock = clock or (lambda: dt.datetime.now().astimezone())
        self._memo: dict[str, tuple[tuple[object, ...], _Known]] = {}

    async def extract(self, messages: Sequence[Message], *, new_messages: int) -> ExtractionResult:
        since = len(messages) - new_messages if new_messages > 0 else len(messages)
        return await asyncio.to_thread(self.apply_messages, messages, since=max(0, since))

    def apply_messages(self, messages: Sequence[Message], *, since: int = 0) -> ExtractionResult:
        """Sentence rules on the user's words from ``since`` on (their text and what they typed
        when turning down a tool call, :mod:`memdir.extract.said`), and the session rules over the
        whole run for lessons that close there (:mod:`memdir.extract.session_rules`), applied in
        the order their evidence closes — so extracting a session turn by turn, each time over
        the session so far, applies exactly what one run over the whole session applies, in the
        same order, and leaves the same memories."""
        today = self._clock().date()
        found = [
            (i, c)
            for i, m in enumerate(messages)
            if i >= since and m.role == "user" and (words := user_words(m))
            for c in candidates(words, today=today)
        ]
        found += self._session_lessons(messages, since)
        return self.apply([c for _i, c in sorted(found, key=lambda pair: pair[0])])

    def apply_session(self, messages: Sequence[Message], *, since: int = 0) -> ExtractionResult:
        """Only the whole-session rules, for lessons that close at ``since`` or later (what a
        model extractor, which reads single turns, leaves to them)."""
        found = self._session_lessons(messages, since)
        return self.apply([c for _i, c in sorted(found, key=lambda pair: pair[0])])

    def _session_lessons(
        self, messages: Sequence[Message], since: int
    ) -> list[tuple[int, Candidate]]:
        """The session rules' lessons that close from ``since`` on, and what this session asked
        once that an earlier session asked too (the daily log notes each first ask,
        :mod:`memdir.extract.sightings`)."""
        found = [(i, c) for i, c in session_lessons(messages) if i >= since]
        session, seen = session_sightings(messages)
        if seen:
            now = self._clock()
            found += across_sessions(self.store.root, seen, session=session, since=since, now=now)
        return found

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
        """Every memory as the rules compare it. One extractor applied many times (a backfill
        of hundreds of sessions) reads again only the files whose header changed since."""
        known = {}
        for header in self.store.list():
            stamp = (header.mtime, header.name, header.description, header.type)
            cached = self._memo.get(header.filename)
            if cached is not None and cached[0] == stamp:
                known[header.filename] = cached[1]
                continue
            try:
                memory = self.store.read(header.filename)
            except MemdirError:  # an unreadable file is doctor's business, not a reason to stop
                continue
            known[header.filename] = _known(header.filename, memory)
            self._memo[header.filename] = (stamp, known[header.filename])
        return known

    def _save(self, candidate: Candidate, known: dict[str, _Known]) -> Path | None:
        assert candidate.type is not None
        today = self._clock().date()
        name = form.name_of(candidate)
        statement = _one_line(candidate.statement)
        body = form.body_of(candidate, today)
        doc = _doc("", candidate.type.value, name, statement)
        match = closest(doc, [k.doc for k in known.values()])
        if match is not None:
            entry = known[match.b]
            # a fact told again with other details ("grafana runs from <another path>") is the
            # newer wording too, though its general words are the same
            moved = candidate.fact is not None and not entry.memory.body.startswith(
                candidate.fact.rstrip(".")
            )
            reword = (
                entry.ours and (match.verdict != "exact" or moved) and entry.memory.type == doc.type
            )
            if match.verdict != "contradiction" or reword:
                line = form.evidence_of(candidate, today)
                changed = self._add_evidence(entry, line, statement, candidate, reword=reword)
                if changed is None:
                    return None
                known[entry.rel] = changed
                return self.store.root / entry.rel
        slug = slugify(name).removeprefix(f"{candidate.type.value}_")  # no "user_user_is_..."
        rel = self._free_name(f"{candidate.type.value}_{slug[:48].rstrip('_')}")
        general = form.without_evidence(body)  # situations from the rule, not one session's words
        situations = applies_when.initial(candidate.type.value, name, statement, general)
        extra = {SAVED_BY: OURS, **situations}
        memory = self.store.create(name, statement, candidate.type, body, rel=rel, extra=extra)
        known[rel] = _known(rel, memory)
        return self.store.root / rel

    def _add_evidence(
        self, entry: _Known, line: str, statement: str, candidate: Candidate, *, reword: bool
    ) -> _Known | None:
        """The memory with this sighting added (and, if ``reword``, the user's newer wording);
        None when nothing would change."""
        current = entry.memory
        new_body = form.with_evidence(current.body, line, ours=entry.ours)
        if reword and (current.description != statement or candidate.fact is not None):
            kept = [ln for ln in current.body.split("\n") if form.is_evidence(ln)]
            if candidate.why is None:  # newer words, no reason given: the one said before stays
                candidate = replace(candidate, why=form.reason_of(current.body))
            fresh = form.body_of(candidate, self._clock().date()).rstrip("\n").split("\n")
            new_body = form.merge_evidence(fresh, kept)
            if new_body == current.body and current.description == statement:
                return None  # told again in the same words: nothing changes
        elif new_body is None:
            return None
        body = new_body

        def change(memory: Memory) -> Memory:
            if reword:
                memory.description = statement
            memory.body = body
            if not entry.ours:
                return memory  # a person's header and words stay theirs
            general = form.without_evidence(body)
            situations = applies_when.derive(memory.type, memory.name, memory.description, general)
            return applies_when.with_applies_when(memory, situations)

        return _known(entry.rel, self.store.update(entry.rel, change))

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
    doc = _doc(rel, memory.type, memory.name, memory.description)
    return _Known(rel, memory, doc, tokens(text))


def _doc(rel: str, type_: str | None, name: str, description: str) -> Doc:
    """A memory as "the same memory" compares it here: its name and its one-line description,
    the rule itself (a body's explanations and evidence would decide on incidental words)."""
    scope = "team" if rel.startswith("team/") else "private"
    return make_doc(rel, scope, type_, f"{name}\n{description}", name=name)


def _one_line(text: str, limit: int = 150) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"
