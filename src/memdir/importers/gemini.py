"""``memdir import gemini [PATH]``: what Gemini CLI remembers, in each layout it has written.

- Gemini CLI up to 0.43: the ``save_memory`` tool appends bullets under ``## Gemini Added
  Memories`` in ``~/.gemini/GEMINI.md`` (newer of those versions also in a project's
  ``GEMINI.md``). Only that section is read: the rest of the file is the user's own context.
- Gemini CLI 0.44 and later (checked against 0.61): there is no ``save_memory``; the model edits
  Markdown itself, in tiers. ``~/.gemini/GEMINI.md`` is the global personal memory (free-form
  bullets under headings: preferences that follow the user everywhere), and each project has a
  private memory folder, ``~/.gemini/tmp/<project>/memory/``: ``MEMORY.md`` is its index (brief
  facts written as bullets, or pointers ``[Title](note.md)`` to sibling notes with the detail).
  0.40 wrote the same project-scope ``MEMORY.md``.

PATH may be a ``GEMINI.md``, a private memory folder or its ``MEMORY.md``, or the ``.gemini``
directory itself (the default, under ``GEMINI_CLI_HOME`` when set, as Gemini CLI does): then the
global file and every project's private memory are read, each memory naming its project.
A project ``GEMINI.md`` in a repository is team-shared instructions and stays where it is.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from memdir import frontmatter
from memdir.errors import ImportSourceError, MemdirError
from memdir.importers.base import MAX_ITEM_CHARS, Item, one_line, read_text, title_of
from memdir.importers.facts import describe, fact_item, fact_type
from memdir.importers.markdown_facts import bullets
from memdir.model import MemoryType
from memdir.pathsafe import read_regular
from memdir.sameness import normalise

SECTION = "Gemini Added Memories"
_POINTER = re.compile(
    r"^\[(?P<title>[^\]]+)\]\((?P<link>[^)\s]+\.md)\)\s*(?:[-—–:]\s*)?(?P<hook>.*)$"
)
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)


class GeminiSource:
    name = "gemini"

    def default_path(self, home: Path, env: Mapping[str, str]) -> Path:
        custom = env.get("GEMINI_CLI_HOME", "").strip()
        return (Path(custom).expanduser() if custom else home) / ".gemini"

    def read(self, path: Path) -> Iterator[Item]:
        if path.is_dir():
            if (path / "MEMORY.md").exists() or path.name == "memory":
                yield from self._private(path, None)
            elif (path / "GEMINI.md").exists() or (path / "tmp").is_dir():
                yield from self._home(path)
            else:
                raise ImportSourceError(f"{path} holds no Gemini CLI memory (GEMINI.md, MEMORY.md)")
            return
        text = read_text(path, "Gemini CLI memory file")
        if path.name == "MEMORY.md":
            yield from self._private(path.parent, None, text)
        elif f"## {SECTION}".casefold() in text.casefold():
            yield from self._saved(path, text)
        else:
            yield from self._free_form(path, text)

    # -- the layouts ---------------------------------------------------------------------------
    def _saved(self, path: Path, text: str) -> Iterator[Item]:
        """Up to 0.43: the bullets ``save_memory`` appended (ids as memdir has always given)."""
        for _, fact in bullets(text, section=SECTION):
            yield fact_item(
                self.name,
                f"{path.name}:{normalise(fact)[:80]}",
                fact,
                origin=f"Gemini CLI's saved memories ({path.name})",
            )

    def _free_form(self, path: Path, text: str) -> Iterator[Item]:
        """0.44+: the global personal memory, every bullet a fact (its heading path says where
        it stood); prose paragraphs are the user's own instructions and are left alone."""
        found = [(heading, fact) for heading, fact in bullets(text) if fact.strip()]
        if not found:
            raise ImportSourceError(
                f"{path} holds no memories: Gemini CLI keeps each one as a '- ' bullet line"
            )
        for heading, fact in found:
            # the personal tier holds how the user works and who they are, never project facts
            kind = fact_type(fact)
            yield fact_item(
                self.name,
                f"{path.name}:{normalise(fact)[:80]}",
                fact,
                type_=MemoryType.FEEDBACK if kind is MemoryType.PROJECT else kind,
                origin=f"Gemini CLI's personal memory ({path.name}"
                + (f", under '{heading}')" if heading else ")"),
            )

    def _home(self, home: Path) -> Iterator[Item]:
        found = False
        if (home / "GEMINI.md").is_file():
            found = True
            yield from self.read(home / "GEMINI.md")
        projects = _projects(home)
        tmp = home / "tmp"
        for slug in sorted(os.listdir(tmp)) if tmp.is_dir() else []:
            memory = tmp / slug / "memory"
            if memory.is_dir() and not memory.is_symlink():
                found = True
                yield from self._private(memory, projects.get(slug, slug))
        if not found:
            raise ImportSourceError(f"{home} holds no Gemini CLI memory (GEMINI.md, tmp/*/memory)")

    def _private(
        self, folder: Path, project: str | None, index: str | None = None
    ) -> Iterator[Item]:
        """A private project memory folder: MEMORY.md's facts and the notes it points at, then
        any note it does not point at."""
        where = f"{project}/" if project else ""
        if index is None:
            index = (
                read_text(folder / "MEMORY.md", "MEMORY.md")
                if (folder / "MEMORY.md").exists()
                else ""
            )
        extra: dict[str, object] = {"source_project": project} if project else {}
        seen: set[str] = set()
        for _heading, text in bullets(index):
            pointer = _POINTER.match(text)
            if pointer is None:
                yield fact_item(
                    self.name,
                    f"{where}MEMORY.md:{normalise(text)[:80]}",
                    text,
                    origin="Gemini CLI's private project memory (MEMORY.md)",
                    extra=extra,
                )
                continue
            link = pointer.group("link").removeprefix("./")
            if "/" in link or link in seen:
                continue
            seen.add(link)
            yield self._note(
                folder, link, where, extra, pointer.group("title"), pointer.group("hook")
            )
        for name in sorted(os.listdir(folder)):
            if name.endswith(".md") and name != "MEMORY.md" and name not in seen:
                yield self._note(folder, name, where, extra, None, "")

    def _note(
        self,
        folder: Path,
        name: str,
        where: str,
        extra: dict[str, object],
        title: str | None,
        hook: str,
    ) -> Item:
        source_id = f"{where}{name}"
        try:
            raw = read_regular(folder / name, limit=MAX_ITEM_CHARS * 4)  # never a FIFO
            parsed = frontmatter.parse(raw.decode("utf-8"), source=folder / name, lenient=True)
        except (OSError, MemdirError, UnicodeDecodeError) as exc:
            why = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
            return Item(
                self.name, source_id, MemoryType.PROJECT, name, "", "", skip=f"unreadable: {why}"
            )
        body = parsed.body.strip()
        heading = _H1.search(body)
        name_ = str(
            parsed.meta.get("name")
            or title
            or (heading.group(1) if heading else "")
            or title_of(body)
        )
        if heading is not None and heading.start() == 0:
            body = body[heading.end() :].strip()
        if not body:
            return Item(self.name, source_id, MemoryType.PROJECT, name_, "", "", skip="empty note")
        kind = MemoryType.PROJECT
        declared = str(parsed.meta.get("type") or "")
        if declared in {t.value for t in MemoryType}:
            kind = MemoryType(declared)
        description = one_line(str(parsed.meta.get("description") or hook or ""), 150)
        return Item(
            source=self.name,
            source_id=source_id,
            type=kind,
            name=one_line(name_, 100),
            description=description or describe(kind, name_, body),
            body=body + "\n\n**Why:** Imported from Gemini CLI's private project memory.\n",
            fact=body,
            extra=extra,
        )


def _projects(home: Path) -> dict[str, str]:
    """slug → project path, from Gemini CLI's own registry (``projects.json``)."""
    try:
        data = json.loads(read_regular(home / "projects.json", limit=1 << 22).decode("utf-8"))
        projects = data.get("projects") if isinstance(data, dict) else None
        if isinstance(projects, dict):
            return {str(v): str(k) for k, v in projects.items() if isinstance(v, str)}
    except (OSError, ValueError):
        pass
    return {}
