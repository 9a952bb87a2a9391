"""The import pipeline's first half: decide, for every item a source yields, whether it is
written, merged or skipped, and why. Nothing here writes.

Order of the checks (the first that applies decides; each gives the reason the dry run prints):

1. the source's own verdict (``Item.skip``: e.g. claude-mem's change records are git history);
2. text that cannot be a memory: NUL, a lone surrogate, over 64 KiB (:func:`~.base.text_problem`);
3. already imported: a memory in the dir carries this ``source`` / ``source_id`` (as its own or
   in ``merged_from``) — this is what makes a re-run change nothing;
4. credentials (:mod:`memdir.team.secrets`): refused and counted, reported by rule label, never
   by value; an import never writes a credential, whatever ``privateSecrets`` says;
5. what the memory rules say not to keep (:mod:`~.keep`), for items not already in memory form;
6. the same memory (:mod:`memdir.sameness`, the notion dream and extraction use): the same as a
   memory already in the dir → skipped, naming it; the same as an earlier item of this import →
   merged into it as dream merges (its distinct lines appended, its provenance in
   ``merged_from``).

Scale: every item is compared only with the memories that share one of its rarest words (or its
exact text), so 10,000 items cost about as many comparisons, not 10,000².
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from memdir.errors import MemdirError
from memdir.importers.base import Item, text_problem
from memdir.importers.keep import not_to_keep
from memdir.model import Memory
from memdir.sameness import Comparer, Doc, make_doc, normalise
from memdir.slug import slugify
from memdir.store import MemoryStore
from memdir.team.secrets import labels, redact, scan

Action = Literal["write", "merge", "skip"]
RULE_REASONS = ("git history", "ephemeral task state", "code structure")
CANDIDATE_WORDS = 8  # the rarest words of an item that propose memories to compare it with
MAX_POSTING = 64  # a word in more memories than this proposes none (it is not a subject)


@dataclass(slots=True)
class Verdict:
    """What happens to one item. ``target``: the file written, merged into, or matched."""

    source_id: str
    name: str
    action: Action
    reason: str
    target: str | None = None
    kind: str = ""  # for skips: duplicate, imported, credential, rules, invalid, source


@dataclass
class ImportPlan:
    source: str
    path: str
    verdicts: list[Verdict] = field(default_factory=list)
    writes: dict[str, Memory] = field(default_factory=dict)  # rel -> memory, in write order

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for v in self.verdicts:
            out[v.action] += 1
            if v.action == "skip":
                out[f"skipped_{v.kind}"] += 1
        return {"items": len(self.verdicts), **out}


@dataclass(slots=True)
class _Existing:
    docs: list[Doc]
    provenance: dict[tuple[str, str], str]  # (source, source_id) -> rel


def _provenance(meta: dict[str, Any]) -> list[tuple[str, str]]:
    source = meta.get("source")
    if not isinstance(source, str):
        return []
    ids = [meta.get("source_id")]
    merged = meta.get("merged_from")
    if isinstance(merged, list):
        ids += merged
    return [(source, str(i)) for i in ids if isinstance(i, str | int)]


def _load_existing(store: MemoryStore) -> _Existing:
    docs: list[Doc] = []
    provenance: dict[tuple[str, str], str] = {}
    for header in store.scan().headers:
        try:
            memory = store.read(header.filename)
        except (MemdirError, OSError):
            continue  # a damaged memory is doctor's to report; it cannot match anything
        for key in _provenance(memory.frontmatter()):
            provenance[key] = header.filename
        text = f"{memory.description}\n{memory.body}"
        docs.append(make_doc(header.filename, "", memory.type, text, name=memory.name))
    return _Existing(docs, provenance)


def _doc(rel: str, item: Item) -> Doc:
    """Compared by what the source said (``fact``), not by the form's boilerplate around it, so
    "Imported from ..." lines (and a description the form wrote) do not make two statements of
    one fact look different."""
    said = item.fact or f"{item.description}\n{item.body}"
    return make_doc(rel, "", item.type.value, said, name=item.name)


def _merge_lines(keeper: Memory, item: Item) -> int:
    """Append the lines of ``item`` that ``keeper`` lacks (dream's merge)."""
    have = {normalise(line) for line in keeper.body.splitlines()}
    have.add(normalise(keeper.description))
    new = []
    for line in [item.description, *item.body.splitlines()]:
        key = normalise(line)
        if key and key not in have:
            have.add(key)
            new.append(line.rstrip())
    if new:
        keeper.body = keeper.body.rstrip("\n") + "\n\n" + "\n".join(new) + "\n"
    return len(new)


class _Namer:
    """File names: the slug of the name, numbered when the dir or this import has it."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.used: set[str] = {"memory.md"}  # MEMORY.md, wherever names fold case
        # the dir's names, read once (a stat per name cost 10,000 of them); a file made meanwhile
        # still fails the import's create-only write, which undoes the whole import
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            self.used.update(n.casefold() for n in os.listdir(store.root))

    def __call__(self, name: str) -> str:
        stem = slugify(name)
        rel, n = f"{stem}.md", 1
        # A slug has no separator or "..": its name at the root is all there is to check.
        while rel.casefold() in self.used:
            n += 1
            rel = f"{stem}_{n}.md"
        self.used.add(rel.casefold())
        return rel


def _memory(rel: str, item: Item, today: str) -> Memory:
    extra: dict[str, Any] = {
        "source": item.source,
        "source_id": item.source_id,
        "imported_at": today,
        **item.extra,
    }
    return Memory(
        path=rel,
        name=" ".join(item.name.split()),  # one line each: a newline could never end the header
        description=" ".join(item.description.split()),
        type=item.type.value,
        body=item.body if item.body.endswith("\n") else item.body + "\n",
        created=item.created or today,
        updated=today,
        extra=extra,
    )


def _early_verdict(item: Item, existing: _Existing, seen: dict[str, str]) -> Verdict | None:
    """Checks 1-5 of the module docstring; None: the item goes on to the sameness check."""

    def skip(kind: str, reason: str, target: str | None = None) -> Verdict:
        return Verdict(item.source_id, item.name, "skip", reason, target, kind)

    if item.skip:
        return skip("rules" if item.skip.startswith(RULE_REASONS) else "source", item.skip)
    if problem := text_problem(item.name, item.description, item.body, item.source_id):
        return skip("invalid", problem)
    key = (item.source, item.source_id)
    if key in existing.provenance:
        return skip("imported", "already imported", existing.provenance[key])
    if item.source_id in seen:
        return skip("imported", "the source repeats this record", seen[item.source_id])
    found = labels(scan(f"{item.name}\n{item.description}\n{item.body}"))
    if found:  # the verdict is printed: its name and id must not carry the value either
        reason = f"holds a credential ({', '.join(found)}); not imported"
        return Verdict(
            redact(item.source_id), redact(item.name), "skip", reason, None, "credential"
        )
    if item.filter and (why := not_to_keep(item.fact or item.body)):
        return skip("rules", why)
    return None


def plan_import(
    store: MemoryStore,
    source: str,
    path: str,
    items: Iterable[Item],
    *,
    today: dt.date | None = None,
) -> ImportPlan:
    """Every item's verdict and the memories to write (see the module docstring)."""
    stamp = (today or dt.date.today()).isoformat()
    plan = ImportPlan(source, path)
    existing = _load_existing(store)
    namer = _Namer(store)
    seen: dict[str, str] = {}
    pending: list[tuple[Item, Doc]] = []
    for item in items:
        verdict = _early_verdict(item, existing, seen)
        if verdict is not None:
            plan.verdicts.append(verdict)
            continue
        seen[item.source_id] = ""
        pending.append((item, _doc(f"#{len(pending)}", item)))
    comparer = Comparer([*existing.docs, *(doc for _, doc in pending)])
    index = _CandidateIndex(comparer)
    for doc in existing.docs:
        index.add(doc, doc.rel)
    for item, doc in pending:
        match = index.same(doc)
        if match is not None and match[0] in plan.writes:
            keeper, how = plan.writes[match[0]], match[1]
            added = _merge_lines(keeper, item)
            keeper.extra.setdefault("merged_from", []).append(item.source_id)
            reason = f"{how} duplicate within this import; {added} distinct line(s) kept there"
            plan.verdicts.append(Verdict(item.source_id, item.name, "merge", reason, keeper.path))
            seen[item.source_id] = keeper.path
            continue
        if match is not None:
            reason = f"the same memory is already in the dir ({match[1]})"
            plan.verdicts.append(
                Verdict(item.source_id, item.name, "skip", reason, match[0], "duplicate")
            )
            continue
        rel = namer(item.name)
        plan.writes[rel] = _memory(rel, item, stamp)
        seen[item.source_id] = rel
        index.add(doc, rel)
        plan.verdicts.append(Verdict(item.source_id, item.name, "write", "new memory", rel))
    return plan


class _CandidateIndex:
    """Accepted memories by their rarer words and exact text, for :meth:`same`."""

    def __init__(self, comparer: Comparer) -> None:
        self.comparer = comparer
        self.postings: dict[str, list[Doc]] = defaultdict(list)
        self.by_key: dict[str, list[Doc]] = defaultdict(list)
        self.rel_of: dict[str, str] = {}

    def _rare(self, doc: Doc) -> list[str]:
        df = self.comparer.df
        rare = [w for w in doc.words if df.get(w, 0) <= MAX_POSTING]
        return sorted(rare, key=lambda w: (df.get(w, 0), w))[:CANDIDATE_WORDS]

    def add(self, doc: Doc, rel: str) -> None:
        self.rel_of[doc.rel] = rel
        self.by_key[doc.key].append(doc)
        for word in self._rare(doc):
            self.postings[word].append(doc)

    def same(self, doc: Doc) -> tuple[str, str] | None:
        """(file, "exact"/"near") of the accepted memory that is the same as ``doc``."""
        candidates = {d.rel: d for d in self.by_key.get(doc.key, [])}
        for word in self._rare(doc):
            for other in self.postings.get(word, []):
                candidates.setdefault(other.rel, other)
        best: tuple[int, float, str, str] | None = None
        for other in candidates.values():
            pair = self.comparer.compare(doc, other)
            if pair.verdict not in ("exact", "near"):
                continue
            rank = (2 if pair.verdict == "exact" else 1, pair.score)
            if best is None or rank > best[:2]:
                best = (*rank, self.rel_of[other.rel], pair.verdict)
        return (best[2], best[3]) if best else None
