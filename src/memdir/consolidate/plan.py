"""The offline dream as a plan: every change computed first, shown as a diff, then applied.

:func:`plan_offline` reads the memory dir and returns a :class:`DreamPlan` — the new text of every
file it would change, with the reason for each — and writes nothing. Steps:

1. **Dates**: relative dates in each current memory get their absolute date
   (:mod:`~memdir.consolidate.dates`), anchored on the memory's own date.
2. **Duplicates**: exact and near duplicates (:mod:`~memdir.sameness`) are grouped
   around the newest memory; every line of an older copy that the newest lacks is appended to it,
   and the older copy is retired (``superseded_by`` the newest, with a reason) — never deleted.
3. **Contradictions**: same subject, conflicting values or negation. Resolved only when the newer
   memory is an explicit correction ("no longer", "actually", "changed to", ...): the older one is
   retired as superseded. Everything else is reported for a person (or the LLM dream) to decide.
4. **Stale references** (when the project root is known): in git, :mod:`memdir.evidence`
   checks what each memory names; a memory whose only outgrown anchors are renamed files is
   re-anchored (new paths, ``verified`` at HEAD), any other is marked with the anchors in
   ``stale_refs``; outside git, repo paths missing from the working tree are listed there.
5. **applies_when**: filled by rules where a current memory has none, refreshed where this plan
   rewrote a memory whose list is the rules' own (:mod:`~memdir.consolidate.applies`).
6. **Index**: each MEMORY.md is repaired against the final state
   (:mod:`~memdir.consolidate.indexfix`).

Invariant: every distinct line of every input is, after the plan, still in a current memory or
in a retired file whose frontmatter says why — the benchmark checks this on a messy dir.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir import frontmatter, index, index_sections
from memdir.consolidate import applies
from memdir.consolidate.dates import DateFix, absolutize
from memdir.consolidate.indexfix import IndexEntry, IndexRepair, repair
from memdir.errors import MemdirError
from memdir.sameness import Comparer, Doc, Pair, make_doc, normalise
from memdir.store import MemoryStore
from memdir.validity import parse_date, retire_meta, validity_of

if TYPE_CHECKING:  # numpy and the model are optional (the ``recall`` extra)
    from memdir.recall.embed import Embedder

_CORRECTION = re.compile(
    r"\b(?:actually|correction|corrected|no longer|not any ?more|instead of|changed (?:to|from)|"
    r"switched (?:to|from)|moved (?:to|from)|now (?:uses?|runs?|is|are|on)|replaced|"
    r"was wrong|superseded|update[sd]?:|as of\b)",
    re.IGNORECASE,
)


@dataclass
class FileChange:
    rel: str
    before: str | None
    after: str
    reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DuplicateGroup:
    keep: str
    merged: tuple[str, ...]
    kinds: tuple[str, ...]  # "exact" or "near", per merged file
    lines_added: int


@dataclass(frozen=True)
class Contradiction:
    older: str
    newer: str
    detail: str
    resolved: bool


@dataclass
class DreamPlan:
    """What an offline dream would do; :func:`memdir.consolidate.apply.apply_plan` does it."""

    root: Path
    today: dt.date
    changes: dict[str, FileChange] = field(default_factory=dict)
    duplicates: list[DuplicateGroup] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)
    date_fixes: dict[str, list[DateFix]] = field(default_factory=dict)
    stale_refs: dict[str, list[str]] = field(default_factory=dict)
    index: dict[str, IndexRepair] = field(default_factory=dict)
    retired: dict[str, str] = field(default_factory=dict)  # rel -> reason
    skipped: list[str] = field(default_factory=list)  # unreadable files, left alone
    extra: dict[str, Any] = field(default_factory=dict)  # what other steps (logs) add

    @property
    def empty(self) -> bool:
        return not self.changes

    @property
    def flagged(self) -> list[Contradiction]:
        return [c for c in self.contradictions if not c.resolved]

    def memory_changes(self) -> list[str]:
        """Changed memory files (the indexes excluded), in plan order."""
        return [r for r in self.changes if index.index_scope(r) is not None]

    def diff(self) -> str:
        """A unified diff of every planned change (``a/`` = now, ``b/`` = after the dream)."""
        chunks: list[str] = []
        for change in self.changes.values():
            before = (change.before or "").splitlines(keepends=True)
            after = change.after.splitlines(keepends=True)
            src = f"a/{change.rel}" if change.before is not None else "/dev/null"
            lines = difflib.unified_diff(before, after, src, f"b/{change.rel}")
            chunks.append("".join(_ensure_newline(line) for line in lines))
        return "".join(chunks)

    def summary(self) -> dict[str, Any]:
        return {
            "changes": {rel: c.reasons for rel, c in self.changes.items()},
            "duplicates": [
                {"keep": g.keep, "merged": list(g.merged), "kinds": list(g.kinds)}
                for g in self.duplicates
            ],
            "contradictions": [
                {"older": c.older, "newer": c.newer, "detail": c.detail, "resolved": c.resolved}
                for c in self.contradictions
            ],
            "dates_fixed": sum(len(v) for v in self.date_fixes.values()),
            "stale_refs": self.stale_refs,
            "retired": self.retired,
            "index": {
                rel: {
                    "dead": r.dead,
                    "dropped_inactive": r.dropped_inactive,
                    "duplicates": r.duplicates,
                    "added": len(r.added),
                    "left_out": r.left_out,
                }
                for rel, r in self.index.items()
            },
            "skipped": self.skipped,
            **self.extra,
        }


def _ensure_newline(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


@dataclass
class _Mem:
    rel: str
    scope: str
    original: str
    meta: dict[str, Any]
    body: str
    mtime: float
    anchor: dt.date
    meta_changed: bool = False
    reasons: list[str] = field(default_factory=list)

    body_at_load: str = ""

    @property
    def prefix(self) -> str:
        """The frontmatter text as written (the body is always a suffix of the file)."""
        return self.original[: len(self.original) - len(self.body_at_load)]

    @property
    def order(self) -> tuple[dt.date, float]:
        return self.anchor, self.mtime

    def current(self, today: dt.date) -> bool:
        return validity_of(self.meta).is_current(today)

    def render(self) -> str:
        if self.meta_changed:
            return frontmatter.dump(self.meta, self.body)
        return self.prefix + self.body

    def set_meta(self, meta: dict[str, Any], reason: str) -> None:
        self.meta = meta
        self.meta_changed = True
        self.reasons.append(reason)


def _anchor(meta: dict[str, Any], mtime: float) -> dt.date:
    for key in ("updated", "created"):
        day = parse_date(meta.get(key))
        if day is not None:
            return day
    return dt.datetime.fromtimestamp(mtime).date()


def _load(store: MemoryStore, plan: DreamPlan) -> dict[str, _Mem]:
    mems: dict[str, _Mem] = {}
    for header in store.scan(limit=None).headers:
        rel = header.filename
        scope_info = index.index_scope(rel)
        if scope_info is None:
            continue  # daily logs and anything else the index does not cover
        try:
            text = store.read_text(rel)
            parsed = frontmatter.parse(text, source=header.path)
        except MemdirError as exc:
            plan.skipped.append(f"{rel}: {exc}")
            continue
        scope = index.TEAM_PREFIX if scope_info[0].startswith(index.TEAM_PREFIX) else ""
        mem = _Mem(rel, scope, text.removeprefix(frontmatter.BOM), dict(parsed.meta), parsed.body,
                   header.mtime, _anchor(parsed.meta, header.mtime))  # fmt: skip
        mem.body_at_load = parsed.body
        mems[rel] = mem
    return mems


def plan_offline(
    store: MemoryStore,
    *,
    today: dt.date | None = None,
    project_root: Path | None = None,
    embedder: Embedder | None = None,
) -> DreamPlan:
    """Compute the offline dream for ``store``'s dir; nothing is written.

    ``embedder`` (any :class:`~memdir.recall.embed.Embedder`) adds paraphrase detection to the
    lexical duplicate check; without it the plan is lexical only.
    """
    day = today or dt.date.today()
    plan = DreamPlan(store.root, day)
    mems = _load(store, plan)
    current = [m for m in mems.values() if m.current(day)]
    for mem in current:
        body, fixes = absolutize(mem.body, mem.anchor)
        if fixes:
            mem.body = body
            plan.date_fixes[mem.rel] = fixes
            mem.reasons.append(f"{len(fixes)} relative date(s) made absolute")
    docs = [_doc(m) for m in current]
    vectors = None
    if embedder is not None and current:
        matrix = embedder.embed([_embed_text(m) for m in current])
        vectors = {m.rel: matrix[i] for i, m in enumerate(current)}
    comparer = Comparer(docs, vectors)
    pairs = [comparer.compare(a, b) for a, b in comparer.candidate_pairs()]
    _merge_duplicates(plan, mems, pairs, day)
    _contradictions(plan, mems, pairs, day)
    if project_root is not None:
        _stale_refs(plan, [m for m in current if m.current(day)], project_root)
    for mem in mems.values():
        text = mem.render()
        if text != mem.original:
            plan.changes[mem.rel] = FileChange(mem.rel, mem.original, text, mem.reasons)
    _applies_when(plan, mems, day)
    _repair_indexes(plan, store.root, mems, day)
    return plan


def _doc(mem: _Mem) -> Doc:
    name = str(mem.meta.get("name") or "")
    description = str(mem.meta.get("description") or "")
    mtype = mem.meta.get("type")
    return make_doc(mem.rel, mem.scope, str(mtype) if mtype else None,
                    f"{description}\n{mem.body}", name=name or Path(mem.rel).stem)  # fmt: skip


def _embed_text(mem: _Mem) -> str:
    return f"{mem.meta.get('name') or ''}\n{mem.meta.get('description') or ''}\n{mem.body[:1000]}"


def _merge_duplicates(
    plan: DreamPlan, mems: dict[str, _Mem], pairs: list[Pair], today: dt.date
) -> None:
    links: dict[str, dict[str, str]] = defaultdict(dict)
    for p in pairs:
        if p.verdict in ("exact", "near"):
            links[p.a][p.b] = p.verdict
            links[p.b][p.a] = p.verdict
    assigned: set[str] = set()
    for rel in sorted(links, key=lambda r: mems[r].order, reverse=True):
        if rel in assigned:
            continue
        members = [
            o for o in sorted(links[rel], key=lambda r: mems[r].order, reverse=True)
            if o not in assigned
        ]  # fmt: skip
        if not members:
            continue
        keeper = mems[rel]
        assigned.update([rel, *members])
        added = 0
        for other in members:
            added += _merge_lines(keeper, mems[other])
            reason = f"duplicate of {rel}; its distinct lines are kept there"
            mems[other].set_meta(
                retire_meta(mems[other].meta, reason=reason, today=today, superseded_by=rel),
                f"retired: {reason}",
            )
            plan.retired[other] = reason
        if added:
            meta = dict(keeper.meta)
            meta["updated"] = today.isoformat()
            keeper.set_meta(meta, f"merged {added} line(s) from {', '.join(members)}")
        kinds = tuple(links[rel][o] for o in members)
        plan.duplicates.append(DuplicateGroup(rel, tuple(members), kinds, added))


def _merge_lines(keeper: _Mem, other: _Mem) -> int:
    """Append the lines of ``other`` (and its description) that ``keeper`` lacks."""
    have = {normalise(line) for line in keeper.body.splitlines()}
    have.add(normalise(str(keeper.meta.get("description") or "")))
    new: list[str] = []
    candidates = [str(other.meta.get("description") or ""), *other.body.splitlines()]
    for line in candidates:
        key = normalise(line)
        if key and key not in have:
            have.add(key)
            new.append(line.rstrip())
    if new:
        body = keeper.body if keeper.body.endswith("\n") or not keeper.body else keeper.body + "\n"
        keeper.body = body + "\n" + "\n".join(new) + "\n"
    return len(new)


def _contradictions(
    plan: DreamPlan, mems: dict[str, _Mem], pairs: list[Pair], today: dt.date
) -> None:
    for p in pairs:
        if p.verdict != "contradiction":
            continue
        a, b = mems[p.a], mems[p.b]
        if not (a.current(today) and b.current(today)):
            continue
        older, newer = (a, b) if a.order <= b.order else (b, a)
        safe = newer.order > older.order and bool(_CORRECTION.search(newer.body))
        if safe:
            reason = f"contradicted by a later correction in {newer.rel} ({p.detail})"
            older.set_meta(
                retire_meta(older.meta, reason=reason, today=today, superseded_by=newer.rel),
                f"retired: {reason}",
            )
            plan.retired[older.rel] = reason
        plan.contradictions.append(Contradiction(older.rel, newer.rel, p.detail, safe))


def _stale_refs(plan: DreamPlan, mems: list[_Mem], project_root: Path) -> None:
    """Evidence first (memdir.evidence: git history, re-anchoring renamed files); outside git,
    the repo paths a memory names that are missing from the working tree."""
    from memdir.evidence import screen
    from memdir.evidence.plain import missing_paths
    from memdir.evidence.repair import marks, reanchored
    from memdir.evidence.repo import Deadline
    from memdir.evidence.service import repository

    found = repository(project_root, Deadline(5.0))
    if found is None:
        for mem in mems:
            _mark(plan, mem, missing_paths(mem.body, project_root))
        return
    head = found[1]
    checked = screen([plan.root / m.rel for m in mems], project_root, None, budget=60.0)
    for mem, result in zip(mems, checked, strict=True):
        ev = result.evidence
        fixed = reanchored(mem.body, ev) if mem.body == mem.body_at_load else None
        if fixed is not None:
            mem.body = fixed[0]
            meta = {**mem.meta, "verified": head}
            meta.pop("stale_refs", None)
            moves = ", ".join(f"{a} -> {b}" for a, b in fixed[1])
            mem.set_meta(meta, f"re-anchored moved file(s): {moves}")
            plan.extra.setdefault("reanchored", []).append(mem.rel)
            continue
        _mark(plan, mem, marks(ev), what="relies on what changed in the repository")


def _mark(
    plan: DreamPlan, mem: _Mem, missing: list[str], what: str = "references missing repo path(s)"
) -> None:
    before = mem.meta.get("stale_refs")
    if missing and before != missing:
        meta = dict(mem.meta)
        meta["stale_refs"] = missing
        mem.set_meta(meta, f"{what}: {', '.join(missing)}")
    elif not missing and before is not None:
        meta = {k: v for k, v in mem.meta.items() if k != "stale_refs"}
        mem.set_meta(meta, "referenced repo paths exist again")
    if missing:
        plan.stale_refs[mem.rel] = missing


def _applies_when(plan: DreamPlan, mems: dict[str, _Mem], today: dt.date) -> None:
    current = [m for m in mems.values() if m.current(today)]
    planned = ((m.rel, m.original, _after(plan, m)) for m in current)
    for rel, (text, reason) in applies.by_rules(planned).items():
        change = plan.changes.setdefault(rel, FileChange(rel, mems[rel].original, text))
        change.after = text
        change.reasons.append(reason)
        plan.extra.setdefault("applies_when", []).append(rel)


def _after(plan: DreamPlan, mem: _Mem) -> str:
    change = plan.changes.get(mem.rel)
    return change.after if change is not None else mem.original


def _repair_indexes(plan: DreamPlan, root: Path, mems: dict[str, _Mem], today: dt.date) -> None:
    scopes = [("", index.ENTRYPOINT_NAME)]
    if (root / index.TEAM_PREFIX).is_dir():
        scopes.append((index.TEAM_PREFIX, index.TEAM_PREFIX + index.ENTRYPOINT_NAME))
    for prefix, index_rel in scopes:
        entries = []
        for mem in mems.values():
            if mem.scope != prefix or not mem.current(today):
                continue
            link = mem.rel[len(prefix) :]
            title = str(mem.meta.get("name") or Path(link).stem)
            hook = str(mem.meta.get("description") or "")
            order = (mem.anchor.toordinal(), mem.mtime, link)
            entries.append(IndexEntry(link, title, hook, order))
        base = root / prefix
        existing = {p.relative_to(base).as_posix() for p in base.rglob("*.md") if p.is_file()}
        before = index.read_entrypoint(root, index_rel)
        # the whole index, sections' entries included; no entry is cut to fit the limits:
        # once the dream's index is written, memdir.index_sections lays it out in sections
        flat = index_sections.expanded(root, index_rel)
        fixed = repair(flat, entries, existing, fit=False)
        plan.index[index_rel] = fixed
        if fixed.text != flat and (before or entries):
            reasons = _index_reasons(fixed)
            plan.changes[index_rel] = FileChange(index_rel, before or None, fixed.text, reasons)


def _index_reasons(r: IndexRepair) -> list[str]:
    out = []
    if r.dead:
        out.append(f"{len(r.dead)} dead link(s) removed")
    if r.dropped_inactive:
        out.append(f"{len(r.dropped_inactive)} retired memory entry(ies) removed")
    if r.duplicates:
        out.append(f"{len(r.duplicates)} duplicate entry(ies) removed")
    if r.added:
        out.append(f"{len(r.added)} unindexed memory(ies) added")
    if r.left_out:
        out.append(f"{r.left_out} oldest entries left out to stay within the limits")
    return out or ["entries regenerated from frontmatter"]
