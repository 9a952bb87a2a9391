"""``memdir import basic-memory [DIR]``: basic-memory's Markdown notes (``~/basic-memory``).

A note has YAML frontmatter (``title``, ``type``, ``permalink``, ``tags``) and a body whose
``- [category] text #tag (context)`` lines are observations and ``- relation [[Target]]`` lines
relations. Each note becomes one memory: the title names it, the first observation (or line)
describes it, the body is kept as written, so its links stay readable. The observation
categories decide the type: preferences, rules and conventions make a feedback memory; notes
about a person a user memory; links and resources a reference; anything else a project memory.
Files reached through symlinks, hidden files and anything that is not Markdown are not read.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

from memdir import frontmatter
from memdir.errors import ImportSourceError, MemdirError
from memdir.importers.base import MAX_ITEM_CHARS, Item, first_sentence, iso_date, one_line
from memdir.importers.facts import describe
from memdir.model import MemoryType
from memdir.pathsafe import read_regular

_OBSERVATION = re.compile(r"^\s*[-*]\s+\[(?P<cat>[^\]]+)\]\s+(?P<text>.+)$")
_CATEGORY_TYPES = {
    MemoryType.FEEDBACK: {"preference", "rule", "convention", "feedback", "style", "guideline"},
    MemoryType.USER: {"person", "user", "bio", "role", "me"},
    MemoryType.REFERENCE: {"link", "reference", "resource", "doc", "docs", "url", "tool"},
}


def _type(categories: Counter[str], note_type: object) -> MemoryType:
    if isinstance(note_type, str) and note_type.lower() in ("person", "user"):
        return MemoryType.USER
    votes: Counter[MemoryType] = Counter()
    for cat, n in categories.items():
        for type_, names in _CATEGORY_TYPES.items():
            if cat in names:
                votes[type_] += n
    return votes.most_common(1)[0][0] if votes else MemoryType.PROJECT


class BasicMemorySource:
    name = "basic-memory"

    def default_path(self, home: Path, env: Mapping[str, str]) -> Path:
        return configured_project(home, env)

    def read(self, path: Path) -> Iterator[Item]:
        if not path.is_dir():
            raise ImportSourceError(f"no basic-memory project directory at {path}")
        for directory, subdirs, files in os.walk(path, followlinks=False):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
            for name in sorted(files):
                file = Path(directory) / name
                if name.startswith(".") or not name.endswith(".md") or file.is_symlink():
                    continue
                yield self._item(file, file.relative_to(path).as_posix())

    def _item(self, file: Path, rel: str) -> Item:
        try:
            if file.stat().st_size > MAX_ITEM_CHARS * 4:
                raise MemdirError(f"{file.stat().st_size} bytes, too large for one memory")
            raw = read_regular(file, limit=MAX_ITEM_CHARS * 4)  # a FIFO is refused, not read
            parsed = frontmatter.parse(raw.decode("utf-8"), source=file, lenient=True)
        except (MemdirError, OSError, UnicodeDecodeError) as exc:
            why = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
            return Item(self.name, rel, MemoryType.PROJECT, rel, "", "", skip=f"unreadable: {why}")
        meta, body = parsed.meta, parsed.body.strip("\n")
        observations = [m for line in body.splitlines() if (m := _OBSERVATION.match(line))]
        categories = Counter(m.group("cat").strip().lower() for m in observations)
        title = " ".join(str(meta.get("title") or Path(rel).stem.replace("-", " ")).split())
        if _is_log(meta.get("type"), title, rel):
            why = "a log or standup: status that ages by the day, not a memory to keep"
            return Item(self.name, rel, MemoryType.PROJECT, one_line(title, 100), "", "", skip=why)
        lead = observations[0].group("text") if observations else _first_text(body)
        lead = _TAG.sub("", lead).strip()  # "#tag" is basic-memory's syntax, not words
        type_ = _type(categories, meta.get("type"))
        description = describe(type_, title, lead) if lead else one_line(title)
        extra: dict[str, object] = {}
        if isinstance(meta.get("permalink"), str):
            extra["source_permalink"] = meta["permalink"]
        tags = meta.get("tags")
        if isinstance(tags, list) and all(isinstance(t, str) for t in tags) and tags:
            extra["tags"] = tags[:10]
        return Item(
            source=self.name,
            source_id=rel,
            type=type_,
            name=one_line(title, 100),
            description=description,
            body=(body or title) + "\n",
            created=iso_date(meta.get("created") or meta.get("date")),
            filter=False,
            extra=extra,
        )


_TAG = re.compile(r"(?<!\S)#[\w/-]+")
_LOG_TYPES = frozenset({"log", "journal", "standup", "daily", "diary", "meeting"})
_LOG_TITLE = re.compile(
    r"\b(?:stand-?up|daily (?:log|note|notes)|work ?log|journal)\b|^\d{4}-\d{2}-\d{2}$", re.I
)


def _is_log(note_type: object, title: str, rel: str) -> bool:
    """A dated log, journal or standup note (by its type, its title or its folder)."""
    if isinstance(note_type, str) and note_type.strip().lower() in _LOG_TYPES:
        return True
    folders = {part.lower() for part in rel.split("/")[:-1]}
    return bool(_LOG_TITLE.search(title)) or bool(folders & {"daily", "standups", "journal"})


def _first_text(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#-* ").strip()
        if text:
            return first_sentence(text)
    return ""


def configured_project(home: Path, env: Mapping[str, str]) -> Path:
    """basic-memory's default project: ``default_project`` in its ``config.json``, else
    ``BASIC_MEMORY_HOME``, else ``~/basic-memory`` (what basic-memory itself falls back to)."""
    config_dir = env.get("BASIC_MEMORY_CONFIG_DIR", "").strip()
    config = (
        Path(config_dir).expanduser() if config_dir else home / ".basic-memory"
    ) / "config.json"
    chosen = _default_project(config)
    if chosen is not None:
        return chosen
    main = env.get("BASIC_MEMORY_HOME", "").strip()
    return Path(main).expanduser() if main else home / "basic-memory"


def _default_project(config: Path) -> Path | None:
    """The ``default_project``'s path in basic-memory's ``config.json``; None without a config
    or with one this reader does not know (then basic-memory's own fallbacks apply)."""
    try:
        data = json.loads(read_regular(config, limit=1 << 20).decode("utf-8"))
        projects = data.get("projects") or {}
        chosen = projects.get(data.get("default_project") or "main")
        if isinstance(chosen, dict):  # newer versions keep {"path": ...} per project
            chosen = chosen.get("path")
    except (OSError, ValueError, AttributeError):
        return None
    return Path(chosen).expanduser() if isinstance(chosen, str) and chosen else None
