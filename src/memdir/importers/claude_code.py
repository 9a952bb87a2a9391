"""``memdir import claude-code [DIR]``: Claude Code's auto memory of other projects
(``~/.claude/projects/<slug>/memory/``), which is memdir's own format.

``DIR`` is the projects directory (every project's ``memory/`` is read) or one memory dir.
Each file keeps its name, description, type, body and extra frontmatter; provenance is
``<project slug>/<path>``. These are memories already, so the not-to-keep rules do not re-judge
them; credentials, duplicates and bad text are checked as for every source. Daily logs, index
files, hidden files and anything reached through a symlink (which could lead out of the
directory) are not read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from memdir import frontmatter
from memdir.errors import ImportSourceError, MemdirError
from memdir.extract.rules import infer_type
from memdir.importers.base import MAX_ITEM_CHARS, Item, first_sentence, iso_date, title_of
from memdir.model import MemoryType
from memdir.pathsafe import read_regular

_PROVENANCE = frozenset({"source", "source_id", "imported_at", "merged_from", "name"})


def _memory_dirs(path: Path) -> list[tuple[str, Path]]:
    if (path / "memory").is_dir() and not (path / "memory").is_symlink():
        return [(path.name, path / "memory")]
    if path.name == "memory" or (path / "MEMORY.md").is_file():
        return [(path.parent.name, path)]
    dirs = []
    for child in sorted(path.iterdir()):
        memory = child / "memory"
        if not child.is_symlink() and memory.is_dir() and not memory.is_symlink():
            dirs.append((child.name, memory))
    return dirs


def _files(root: Path) -> Iterator[str]:
    for directory, subdirs, files in os.walk(root, followlinks=False):
        rel_dir = Path(directory).relative_to(root).as_posix()
        subdirs[:] = sorted(
            d for d in subdirs if not d.startswith(".") and not (rel_dir == "." and d == "logs")
        )
        for name in sorted(files):
            if name.startswith(".") or not name.endswith(".md") or name == "MEMORY.md":
                continue
            if (Path(directory) / name).is_symlink():
                continue
            yield name if rel_dir == "." else f"{rel_dir}/{name}"


class ClaudeCodeSource:
    name = "claude-code"

    def default_path(self, home: Path, env: Mapping[str, str]) -> Path:
        config = env.get("CLAUDE_CONFIG_DIR", "").strip()
        return (Path(config).expanduser() if config else home / ".claude") / "projects"

    def read(self, path: Path) -> Iterator[Item]:
        if not path.is_dir():
            raise ImportSourceError(f"no Claude Code projects or memory directory at {path}")
        dirs = _memory_dirs(path)
        if not dirs:
            raise ImportSourceError(f"{path} holds no Claude Code memory directory")
        for slug, root in dirs:
            for rel in _files(root):
                yield self._item(slug, root, rel)

    def _item(self, slug: str, root: Path, rel: str) -> Item:
        source_id = f"{slug}/{rel}"
        file = root / rel
        try:
            if file.stat().st_size > MAX_ITEM_CHARS * 4:
                raise MemdirError(f"{file.stat().st_size} bytes, too large for one memory")
            text = read_regular(file, limit=MAX_ITEM_CHARS * 4).decode("utf-8")  # never a FIFO
            memory = frontmatter.parse_memory(text, rel, source=file)
        except (MemdirError, OSError, UnicodeDecodeError) as exc:
            why = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
            return Item(
                self.name, source_id, MemoryType.PROJECT, rel, "", "", skip=f"unreadable: {why}"
            )
        body = memory.body.strip("\n")
        type_ = memory.memory_type or infer_type(first_sentence(body) or memory.name)
        name = memory.name
        if not name or _unbalanced(name):  # "[unclosed": YAML a tool broke, read as text
            name = title_of(body) if body.strip() else Path(rel).stem.replace("_", " ")
        extra = {k: v for k, v in memory.extra.items() if k not in _PROVENANCE}
        extra["source_project"] = slug
        return Item(
            source=self.name,
            source_id=source_id,
            type=type_,
            name=" ".join(str(name).split()),
            description=memory.description or first_sentence(body),
            body=body + "\n",
            created=iso_date(memory.created) if memory.created else None,
            filter=False,
            extra=extra,
        )


def _unbalanced(text: str) -> bool:
    pairs = (("[", "]"), ("{", "}"), ("(", ")"))
    return any(text.count(a) != text.count(b) for a, b in pairs) or text.count('"') % 2 == 1
