"""``memdir import qwen [DIR]``: Qwen Code's managed auto memory, which is memdir's own format.

Qwen Code (0.24) keeps, on by default, a cross-project memory in ``<qwen home>/memories/`` and
one per project in ``<qwen home>/projects/<slug>/memory/`` (``$QWEN_HOME``, else ``~/.qwen``):
a ``MEMORY.md`` index and one Markdown file per memory with ``name``, ``description`` and
``type`` (user | feedback | project | reference) — Claude Code's layout, read the same way
(:class:`~memdir.importers.claude_code.ClaudeCodeSource`). ``DIR`` is the Qwen home, its
``projects`` directory, or one memory dir. The cross-project memories come with the source
project ``qwen-user``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from memdir.errors import ImportSourceError
from memdir.importers.base import Item
from memdir.importers.claude_code import ClaudeCodeSource, _files, _memory_dirs

USER_SLUG = "qwen-user"


class QwenSource(ClaudeCodeSource):
    name = "qwen"

    def default_path(self, home: Path, env: Mapping[str, str]) -> Path:
        custom = env.get("QWEN_HOME", "").strip()
        return Path(custom).expanduser() if custom else home / ".qwen"

    def read(self, path: Path) -> Iterator[Item]:
        if not path.is_dir():
            raise ImportSourceError(f"no Qwen Code memory at {path}")
        dirs: list[tuple[str, Path]] = []
        user = path / "memories"
        if user.is_dir() and not user.is_symlink():
            dirs.append((USER_SLUG, user))
        projects = path / "projects"
        if projects.is_dir() and not projects.is_symlink():
            dirs += _memory_dirs(projects)
        if not dirs:
            dirs = _memory_dirs(path)  # a projects dir or one memory dir named directly
        if not dirs:
            raise ImportSourceError(f"{path} holds no Qwen Code memory directory")
        for slug, root in dirs:
            for rel in _files(root):
                yield self._item(slug, root, rel)
