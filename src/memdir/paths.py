"""Where memory lives: project slug, canonical git root, memory/team/log/session/agent/cache dirs.

Invariants (layout compatible with the reference, so memdir opens existing memory dirs):

* A project is identified by its *canonical* git root, so every worktree of one repository shares
  one memory dir; outside git the working directory is the project. The slug is
  :func:`sanitize_path` of that root, and ``<memory base>/projects/<slug>/memory/`` is the default
  memory dir. Transcripts, by contrast, are keyed by the raw working directory.
* A memory-dir override that is not an absolute, specific directory (relative, a drive root, UNC,
  NUL, ``~`` alone) is refused with :class:`~memdir.errors.ConfigError` before anything is created.
* Derived caches live outside the memory dir (under memdir's own home even in ``--claude`` mode), so
  deleting them never touches memories and syncing memories never ships caches.

Nothing here creates directories; callers create what they write into.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from memdir.errors import ConfigError, UnsafePathError

ENTRYPOINT_NAME = "MEMORY.md"
MAX_SANITIZED_LENGTH = 200
AgentScope = Literal["user", "project", "local"]

_ALNUM = frozenset(map(ord, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"))
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _utf16_units(text: str) -> list[int]:
    # The reference works on JavaScript strings, i.e. UTF-16 code units: an astral character
    # counts as two units for the length cap, the hash and the character replacement alike.
    raw = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(raw[i : i + 2], "little") for i in range(0, len(raw), 2)]


def djb2_hash(text: str) -> int:
    """The reference's 32-bit signed djb2 over UTF-16 code units (``h = h*31 + c | 0``)."""
    h = 0
    for unit in _utf16_units(text):
        h = ((h << 5) - h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def _base36(n: int) -> str:
    if n == 0:
        return "0"
    digits = []
    while n:
        n, rem = divmod(n, 36)
        digits.append(_BASE36[rem])
    return "".join(reversed(digits))


def sanitize_path(name: str) -> str:
    """Project slug: every non-alphanumeric UTF-16 unit becomes ``-``; long names get a hash.

    Names longer than 200 units keep their first 200 sanitized units plus ``-`` and the base-36
    djb2 hash of the *original* name, so two long paths sharing a prefix stay distinct.
    """
    units = _utf16_units(name)
    sanitized = "".join(chr(u) if u in _ALNUM else "-" for u in units)
    if len(sanitized) <= MAX_SANITIZED_LENGTH:
        return sanitized
    return f"{sanitized[:MAX_SANITIZED_LENGTH]}-{_base36(abs(djb2_hash(name)))}"


def find_project_dir(parent: Path, slug: str) -> Path:
    """``parent/slug``, or for a hashed long slug an existing ``<prefix>-*`` sibling.

    Another implementation may have hashed the same long name differently; the 200-unit prefix
    is what both agree on, so an existing directory with that prefix is reused.
    """
    exact = parent / slug
    if len(slug) <= MAX_SANITIZED_LENGTH or exact.is_dir():
        return exact
    prefix = slug[:MAX_SANITIZED_LENGTH] + "-"
    try:
        candidates = sorted(p for p in parent.iterdir() if p.name.startswith(prefix) and p.is_dir())
    except OSError:
        return exact
    return candidates[0] if candidates else exact


def validate_memory_path(raw: str, *, source: str, home: Path | None = None) -> Path | None:
    """Validate a memory-dir override; ``None`` for an empty value, ConfigError when unsafe.

    ``home`` enables ``~/`` expansion (settings files); env and flag values are taken literally.
    The result is normalized, NFC, without a trailing separator.
    """
    if not raw:
        return None

    def reject(reason: str) -> ConfigError:
        return ConfigError(f"memory directory {raw!r} from {source} rejected: {reason}")

    candidate = raw
    if home is not None and (candidate.startswith("~/") or candidate.startswith("~\\")):
        rest = candidate[2:]
        if os.path.normpath(rest or ".") in (".", ".."):
            raise reject("'~' alone or its parent would cover the whole home directory")
        candidate = os.path.join(home, rest)
    if "\x00" in candidate:
        raise reject("contains a NUL byte")
    normalized = os.path.normpath(candidate).rstrip("/\\")
    if normalized.startswith(("\\\\", "//")):
        raise reject("UNC / network paths are not allowed")
    if re.fullmatch(r"[A-Za-z]:", normalized):
        raise reject("a bare drive letter is not a directory")
    if not os.path.isabs(normalized):
        raise reject("must be an absolute path (no ~ expansion here)")
    if len(normalized) < 3:
        raise reject("too short to be a dedicated memory directory")
    return Path(_nfc(normalized))


def find_git_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding a ``.git`` entry (dir or file)."""
    current = Path(os.path.abspath(start))
    while True:
        marker = current / ".git"
        if marker.is_dir() or marker.is_file():  # follows symlinks; a dangling one is no repo
            return Path(_nfc(str(current)))
        if current.parent == current:
            return None
        current = current.parent


def canonical_git_root(git_root: Path) -> Path:
    """The main repository root that a worktree belongs to; ``git_root`` itself otherwise.

    A worktree's ``.git`` file names its private gitdir, whose ``commondir`` names the shared one.
    The link is trusted only when the gitdir sits in ``<commondir>/worktrees/`` and its ``gitdir``
    back-link points at this checkout, so a crafted ``.git`` file cannot borrow another project's
    memory. Submodules (no ``commondir``) and any error keep ``git_root``.
    """
    try:
        dot_git = git_root / ".git"
        if dot_git.is_dir():
            return git_root
        content = dot_git.read_text("utf-8").strip()
        if not content.startswith("gitdir:"):
            return git_root
        worktree_git = Path(os.path.normpath(git_root / content[len("gitdir:") :].strip()))
        common_rel = (worktree_git / "commondir").read_text("utf-8").strip()
        common = Path(os.path.normpath(worktree_git / common_rel))
        if worktree_git.parent != common / "worktrees":
            return git_root
        backlink = (worktree_git / "gitdir").read_text("utf-8").strip()
        if os.path.realpath(backlink) != os.path.join(os.path.realpath(git_root), ".git"):
            return git_root
        if common.name != ".git":
            return Path(_nfc(str(common)))  # a worktree of a bare repository
        return Path(_nfc(str(common.parent)))
    except (OSError, UnicodeDecodeError, ValueError):
        return git_root


def find_canonical_git_root(start: Path) -> Path | None:
    root = find_git_root(start)
    return canonical_git_root(root) if root is not None else None


def is_memory_path(path: Path | str, memory_dir: Path) -> bool:
    """True when ``path`` (absolute, normalized lexically) lies inside ``memory_dir``."""
    text = str(path)
    if not os.path.isabs(text):
        return False
    base = os.path.normpath(memory_dir).rstrip(os.sep) + os.sep
    return _nfc(os.path.normpath(text)).startswith(_nfc(base))


def _check_id(value: str, what: str) -> str:
    if not _SAFE_ID.match(value) or ".." in value:
        raise UnsafePathError(f"invalid {what} {value!r}")
    return value


@dataclass(frozen=True)
class ResolvedPaths:
    """Every location memdir uses for one project, with the source that decided each."""

    cwd: Path
    project_root: Path
    slug: str
    memory_base: Path
    memory_dir: Path
    entrypoint: Path
    team_dir: Path
    logs_dir: Path
    projects_dir: Path
    transcripts_dir: Path
    cache_dir: Path
    project_config_dir: Path
    decided_by: Mapping[str, str] = field(default_factory=dict)

    @property
    def team_entrypoint(self) -> Path:
        return self.team_dir / ENTRYPOINT_NAME

    def daily_log(self, day: dt.date) -> Path:
        """``logs/YYYY/MM/YYYY-MM-DD.md`` for a (local) date."""
        return self.logs_dir / f"{day:%Y}" / f"{day:%m}" / f"{day:%Y-%m-%d}.md"

    def session_dir(self, session_id: str) -> Path:
        return self.transcripts_dir / _check_id(session_id, "session id")

    def transcript_path(self, session_id: str) -> Path:
        return self.transcripts_dir / f"{_check_id(session_id, 'session id')}.jsonl"

    def subagent_transcript_path(self, session_id: str, agent_id: str) -> Path:
        agent = _check_id(agent_id, "agent id")
        return self.session_dir(session_id) / "subagents" / f"agent-{agent}.jsonl"

    def session_memory_path(self, session_id: str) -> Path:
        return self.session_dir(session_id) / "session-memory" / "summary.md"

    def agent_memory_dir(self, scope: AgentScope, agent_type: str) -> Path:
        """Memory dir of an agent type: user-wide, shared with the project, or local-only."""
        name = _check_id(agent_type.replace(":", "-"), "agent type")
        if scope == "user":
            return self.memory_base / "agent-memory" / name
        if scope == "project":
            return self.project_config_dir / "agent-memory" / name
        if scope == "local":
            return self.project_config_dir / "agent-memory-local" / name
        raise ConfigError(f"unknown agent memory scope {scope!r} (user, project or local)")

    def agent_snapshot_dir(self, agent_type: str) -> Path:
        name = _check_id(agent_type.replace(":", "-"), "agent type")
        return self.project_config_dir / "agent-memory-snapshots" / name

    def as_dict(self) -> dict[str, str]:
        """Plain strings for ``memdir where`` and JSON output."""
        names = (
            *("cwd", "project_root", "slug", "memory_base", "memory_dir", "entrypoint"),
            *("team_dir", "logs_dir", "projects_dir", "transcripts_dir", "cache_dir"),
        )
        return {name: str(getattr(self, name)) for name in names}


class PathSettings(Protocol):
    """What :func:`resolve_paths` needs from the settings (``config.Settings`` provides it).

    A protocol instead of an import: ``config`` imports this module, so naming ``Settings`` here
    would make the two modules import each other.
    """

    @property
    def claude_mode(self) -> bool: ...
    @property
    def home(self) -> Path: ...
    @property
    def memdir_home(self) -> Path: ...
    @property
    def memory_base(self) -> Path: ...
    @property
    def memory_dir_override(self) -> Path | None: ...
    @property
    def sources(self) -> Mapping[str, str]: ...


def resolve_paths(settings: PathSettings, *, cwd: Path) -> ResolvedPaths:
    """Resolve every directory for the project containing ``cwd`` under ``settings``."""
    here = Path(_nfc(os.path.realpath(cwd)))
    git_root = find_git_root(here)
    if git_root is None:
        project_root, root_source = here, "working directory (not in a git repository)"
    else:
        project_root = canonical_git_root(git_root)
        root_source = "git root" if project_root == git_root else f"main worktree of {git_root}"
    slug = sanitize_path(str(project_root))
    decided = {"project_root": root_source, "memory_base": settings.sources.get("memory_base", "")}
    if settings.memory_dir_override is not None:
        memory_dir = settings.memory_dir_override
        decided["memory_dir"] = settings.sources.get("memory_dir", "override")
    else:
        memory_dir = find_project_dir(settings.memory_base / "projects", slug) / "memory"
        decided["memory_dir"] = "default: <memory base>/projects/<slug>/memory"
    projects_dir = settings.home / "projects"
    decided["projects_dir"] = settings.sources.get("home", "")
    decided["cache_dir"] = "memdir home (caches never live inside the memory dir)"
    config_dirname = ".claude" if settings.claude_mode else ".memdir"
    return ResolvedPaths(
        cwd=here,
        project_root=project_root,
        slug=slug,
        memory_base=settings.memory_base,
        memory_dir=memory_dir,
        entrypoint=memory_dir / ENTRYPOINT_NAME,
        team_dir=memory_dir / "team",
        logs_dir=memory_dir / "logs",
        projects_dir=projects_dir,
        transcripts_dir=find_project_dir(projects_dir, sanitize_path(str(here))),
        cache_dir=settings.memdir_home / "cache" / sanitize_path(str(memory_dir)),
        project_config_dir=here / config_dirname,
        decided_by=decided,
    )
