"""What each MCP tool does, as plain methods returning JSON-ready dicts (no MCP import here).

The MCP server (:mod:`memdir.adapters.mcp_server`) only registers these and maps errors; keeping
the behaviour here lets it be tested without a transport and keeps the server module about
wiring.

Invariants:
- Paths are relative to the memory dir (an absolute path inside it is accepted too); every one
  goes through the store's path checks, and every write through the store (atomic, locked,
  guarded, MEMORY.md kept in step).
- Bad input raises a :class:`~memdir.errors.MemdirError` subclass *before* anything is written.
- Recall is the recall engine's: headers only to choose (the selector never sees bodies), then
  the chosen few surfaced with the engine's caps (200 lines / 4,096 bytes each) and their age,
  so a client sees how fresh each memory is.
"""

from __future__ import annotations

import builtins
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memdir import applies_when as aw
from memdir import frontmatter
from memdir.age import freshness_note, memory_age
from memdir.errors import FrontmatterError, MemdirError, ToolDenied
from memdir.index import ENTRYPOINT_NAME, load_for_prompt, read_entrypoint
from memdir.model import MEMORY_TYPES, MemoryType
from memdir.recall.base import MAX_SELECTED, Selector, takes_keyword
from memdir.recall.engine import MemoryRecall
from memdir.recall.surface import RelevantMemory, surface
from memdir.store import MemoryStore, slugify
from memdir.team.guard import with_credential_notes

log = logging.getLogger(__name__)
WARM_READ_SECONDS = 0.2

SelectorFactory = Callable[[], Selector]
LIST_LIMIT = 200


def parse_type(value: str) -> MemoryType:
    parsed = MemoryType.parse(value)
    if parsed is None:
        raise FrontmatterError(
            f"unknown memory type {value!r}; use one of: {', '.join(MEMORY_TYPES)}"
        )
    return parsed


def _situations(value: object) -> list[str]:
    """The ``applies_when`` a tool caller gave: a list of strings (one string is one item),
    bounded and made one printable line each by :func:`memdir.applies_when.normalise`."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise FrontmatterError(
            f"applies_when must be a list of short strings (situations), not {type(value).__name__}"
        )
    for number, item in enumerate(items, start=1):
        if not isinstance(item, str):
            raise FrontmatterError(
                f"applies_when item {number} is {type(item).__name__}, not a string (a situation)"
            )
    return aw.normalise(items)


class MemoryTools:
    """The memory tools over one store; ``selector`` is built on first recall (it may be heavy)."""

    def __init__(
        self,
        store: MemoryStore,
        selector: Selector | SelectorFactory,
        *,
        header_cache: Path | None = None,
        evidence: tuple[Path, Path | None] | None = None,
    ):
        self.store = store
        self.header_cache = header_cache
        self.evidence = evidence  # (repository, cache dir): check recalled memories against it
        self._selector = selector if isinstance(selector, Selector) else None
        self._factory = None if isinstance(selector, Selector) else selector
        self._building = threading.Lock()

    @property
    def selector(self) -> Selector:
        with self._building:
            if self._selector is None:
                assert self._factory is not None
                self._selector = self._factory()
            return self._selector

    def warm(self) -> threading.Thread:
        """Build the selector and its index in a background thread (at server start), so the
        first ``memory_recall`` finds them ready or under way; a failure is left to that call."""

        def run() -> None:
            try:
                refresh = getattr(self.selector, "refresh", None)
                if refresh is not None and takes_keyword(refresh, "deadline"):
                    # a short first slice; the selector's background fill reads the rest
                    # between queries, so a recall never waits for the whole build
                    refresh(deadline=time.monotonic() + WARM_READ_SECONDS)
                elif refresh is not None:
                    refresh()
            except Exception:  # the first recall builds it again and reports what is wrong
                log.debug("warming recall failed", exc_info=True)

        thread = threading.Thread(target=run, daemon=True, name="memdir-recall-warm")
        thread.start()
        return thread

    # -- reading ---------------------------------------------------------------------------
    async def recall(self, query: str, limit: int = MAX_SELECTED) -> dict[str, Any]:
        """The recall engine's candidates and selector, surfaced with its size caps.

        Unlike recall on a user prompt, an explicit tool call is never skipped for being a single
        word: the model asked.
        """
        if not query.strip():  # nothing to match on: recall is advisory, so no error either
            return {"query": query, "memories": []}
        limit = max(1, min(limit, MAX_SELECTED))
        engine = MemoryRecall(self.store.root, self.selector, header_cache=self.header_cache)
        headers = engine.candidates(query, None)
        chosen = await self.selector.select(query, headers, limit=limit)
        by_name = {h.filename: h for h in headers}
        now = time.time()
        results = []
        for sel in chosen[:limit]:
            header = by_name.get(sel.filename)
            if header is None:  # a selector may only pick given headers; ignore any other
                continue
            found = RelevantMemory(header.path, header.filename, header.mtime, sel.score)
            attachment = surface(found, now=now)
            if attachment is None:  # vanished since the scan
                continue
            results.append(
                {
                    "path": header.filename,
                    "name": header.name,
                    "description": header.description,
                    "type": header.type,
                    "age": memory_age(header.mtime, now),
                    "freshness_note": freshness_note(header.mtime, now),
                    "score": sel.score,
                    "content": attachment.content,
                    "truncated": attachment.truncated,
                }
            )
        if self.evidence is not None and results:
            self._check(results)
        return {"query": query, "memories": results}

    def _check(self, results: list[dict[str, Any]]) -> None:
        """Each result's evidence (memdir.evidence); a held-back one keeps only a note."""
        from memdir.evidence import screen

        assert self.evidence is not None
        root, cache = self.evidence
        paths = [self.store.path_of(r["path"]) for r in results]
        for result, checked in zip(results, screen(paths, root, cache), strict=True):
            ev = checked.evidence
            result["evidence"], result["held_back"] = ev.report(), ev.held_back
            title = result["name"] or result["path"]
            result["content"] = ev.shown(result["content"], title, result["path"])

    def read(self, path: str) -> dict[str, Any]:
        rel = self.store.rel(path)
        text = self.store.read_text(rel)
        memory = frontmatter.parse_memory(text, rel, source=rel)
        mtime = self.store.path_of(rel).stat().st_mtime
        return {
            "path": rel,
            "name": memory.name,
            "description": memory.description,
            "type": memory.type,
            "body": memory.body,
            "age": memory_age(mtime),
            "freshness_note": freshness_note(mtime),
            "hash": self.store.file_hash(rel),
        }

    def list(self, type: str | None = None, limit: int = LIST_LIMIT) -> dict[str, Any]:
        """Newest first, at most ``limit``; ``total`` says how many matched before the cut."""
        wanted = parse_type(type).value if type else None
        result = self.store.scan(limit=None)
        now = time.time()
        rows = [
            {
                "path": h.filename,
                "name": h.name,
                "description": h.description,
                "type": h.type,
                "age": memory_age(h.mtime, now),
            }
            for h in result.headers
            if wanted is None or MemoryType.parse(h.type) == wanted
        ]
        problems = [
            {"path": self._shown(issue.path), "reason": issue.reason, "kind": issue.kind}
            for issue in [*result.errors, *result.notes]
        ]
        return {"memories": rows[:limit], "total": len(rows), "problems": problems}

    def _shown(self, path: Any) -> str:
        try:
            return str(self.store.rel(path))
        except MemdirError:
            return str(path)

    def index(self) -> dict[str, Any]:
        loaded = load_for_prompt(read_entrypoint(self.store.root))
        return {
            "content": loaded.content,
            "line_count": loaded.line_count,
            "char_count": loaded.byte_count,
            "truncated": loaded.truncated,
        }

    # -- writing ---------------------------------------------------------------------------
    @with_credential_notes
    def save(
        self,
        name: str,
        description: str,
        type: str,
        body: str,
        path: str | None = None,
        overwrite: bool = False,
        applies_when: builtins.list[str] | str | None = None,
    ) -> dict[str, Any]:
        """Create (or with ``overwrite`` replace) a memory. ``applies_when`` is the saving
        agent's own list of situations that should recall it, stored as given (bounded) and
        marked ``agent``; recall reads the rules' situations before it (docs/recall.md).
        Without it a new memory gets the rules' list and an overwritten one keeps its own."""
        mtype = parse_type(type)
        given = _situations(applies_when)
        if not name.strip():
            raise FrontmatterError("a memory needs a non-empty name")
        if not description.strip():
            raise FrontmatterError("a memory needs a one-line description (used to recall it)")
        target = self.store.rel(path) if path else slugify(name) + ".md"
        self._refuse_index(target)
        with self.store.lock():
            if overwrite and self.store.exists(target):
                try:
                    memory = self.store.read(target)
                except FrontmatterError:  # a corrupt file is replaced whole, as asked
                    memory = None
                if memory is not None and target.endswith(".md"):
                    # Replace in place: keep the created date and any extra frontmatter keys.
                    memory.name, memory.type = name.strip(), mtype.value
                    memory.description = " ".join(description.split())
                    memory.body = body if body.endswith("\n") or not body else body + "\n"
                    if given:
                        memory.extra.update(
                            aw.from_agent(
                                mtype.value, memory.name, memory.description, memory.body, given
                            )
                        )
                    saved = self.store.save(aw.with_applies_when(memory))
                    return {"path": saved.path, "created": False}
            existed = self.store.exists(target)
            created = self.store.create(
                name,
                description,
                mtype,
                body,
                rel=target,
                overwrite=overwrite,
                extra=aw.from_agent(mtype.value, name, description, body, given),
            )
        return {"path": created.path, "created": not existed}

    @with_credential_notes
    def edit(
        self, path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> dict[str, Any]:
        self._refuse_index(path)
        rel = self.store.edit(path, old_string, new_string, replace_all=replace_all)
        return {"path": rel}

    def delete(self, path: str) -> dict[str, Any]:
        self._refuse_index(path)
        return {"path": self.store.delete(path)}

    @with_credential_notes
    def rename(self, old_path: str, new_path: str) -> dict[str, Any]:
        self._refuse_index(old_path)
        self._refuse_index(new_path)
        return {
            "old_path": self.store.rel(old_path),
            "new_path": self.store.rename(old_path, new_path),
        }

    def _refuse_index(self, path: str) -> None:
        # MEMORY.md is derived from the memory files; writing it by hand through a tool would be
        # overwritten on the next save, so the tools refuse it and say where to look instead.
        if self.store.rel(path).rsplit("/", 1)[-1] == ENTRYPOINT_NAME:
            raise ToolDenied(
                f"{ENTRYPOINT_NAME} is the index memdir maintains from the memory files; "
                "save, edit or rename the memories instead (memory_index shows it)"
            )
