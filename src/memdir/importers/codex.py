"""``memdir import codex [DIR]``: Codex's memories (``~/.codex/memories/``).

Codex consolidates what it learns into ``MEMORY.md`` (bullets under headings, in blocks that
name the rollouts they came from); notes a user or tool adds live under
``extensions/ad_hoc/notes/*.md``. Both are imported: each bullet, and each note, is one fact;
the blocks' rollout lines and metadata keys are not. A note that is a request ("Forget the
earlier note that I prefer tabs", "Update: CI moved from Node 20 to Node 22") is applied to the
facts it names (:mod:`memdir.importers.requests`), not stored as a fact. ``raw_memories.md`` and
``rollout_summaries/`` are Codex's unconsolidated input (what happened in each session) and are
counted as skipped: the facts worth keeping from them are already in ``MEMORY.md``;
``memory_summary.md`` is a digest of ``MEMORY.md`` itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from memdir.errors import ImportSourceError
from memdir.importers.base import Item, read_text
from memdir.importers.facts import fact_item
from memdir.importers.markdown_facts import bullets
from memdir.importers.requests import Request, apply_requests, as_request
from memdir.model import MemoryType
from memdir.sameness import normalise

NOTES = Path("extensions") / "ad_hoc" / "notes"
# "- 2026-02-20T08-00-00-ci-flakes.md (success, cwd=/repo)": which rollout a block came from
_ROLLOUT_REF = re.compile(r"^\d{4}-\d{2}-\d{2}T[\d-]+[\w.-]*\.md\b")
# ... and the block's own metadata keys, glued to a fact when no blank line came first
_TRAILING_META = re.compile(r"\s*(?:---\s*)?(?:rollout_summary_files|keywords|applies_to):.*$")
_SESSION_INPUT = "ephemeral task state: Codex's per-session input, consolidated into MEMORY.md"


class CodexSource:
    name = "codex"

    def default_path(self, home: Path, env: Mapping[str, str]) -> Path:
        codex_home = env.get("CODEX_HOME", "").strip()
        return (Path(codex_home).expanduser() if codex_home else home / ".codex") / "memories"

    def read(self, path: Path) -> Iterator[Item]:
        if not path.is_dir():
            raise ImportSourceError(f"no Codex memories directory at {path}")
        found = False
        facts: list[Item] = []
        requests: list[tuple[str, Request]] = []
        memory = path / "MEMORY.md"
        if memory.is_file():
            found = True
            for heading, fact in bullets(read_text(memory, "Codex MEMORY.md")):
                fact = _TRAILING_META.sub("", fact).strip()
                if not fact or _ROLLOUT_REF.match(fact):
                    continue  # a block's header: which rollout it came from, not a fact
                origin = f"Codex memories (MEMORY.md{', ' + heading if heading else ''})"
                facts.append(
                    fact_item(self.name, f"MEMORY.md:{normalise(fact)[:80]}", fact, origin=origin)
                )
        notes = path / NOTES
        for note in sorted(notes.glob("*.md")) if notes.is_dir() else []:
            if note.is_symlink() or not note.is_file():
                continue
            found = True
            text = read_text(note, "Codex note").strip()
            request = as_request(text)
            if request is not None:
                requests.append((f"notes/{note.name}", request))
                if request.fact is None:
                    continue
                text = request.fact
            facts.append(
                fact_item(
                    self.name, f"notes/{note.name}", text, origin=f"a Codex note ({note.name})"
                )
            )
        yield from apply_requests(self.name, facts, requests)
        for extra in ("raw_memories.md", "rollout_summaries"):
            if (path / extra).exists():
                found = True
                yield Item(self.name, extra, MemoryType.PROJECT, extra, "", "", skip=_SESSION_INPUT)
        if not found:
            raise ImportSourceError(f"{path} holds no Codex memories (no MEMORY.md or notes)")
