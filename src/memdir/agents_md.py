"""``memdir export agents-md``: standing instructions for tools that read only AGENTS.md & co.

Some agents never call memdir: they read ``AGENTS.md`` (Codex, Cursor, many others), ``CLAUDE.md``
or ``GEMINI.md`` and nothing else. The memories that are standing instructions -- ``feedback``
(how to work) and ``user`` (who the work is for) -- are rendered into one marked section of such
a file (:mod:`memdir.marked_section`), within a byte budget, in a stable order (type, then team
before private, then path: the section only changes when a memory does).

Invariants:

* **Private memory stays out of files git would commit.** ``user`` memories are always private
  and ``feedback`` is private unless it sits in ``team/``; a committed AGENTS.md is pushed to
  every clone and kept in history for good. So when git would commit the file (tracked, or
  untracked and not ignored; when git cannot tell, memdir assumes it would), only team memories
  go in unless the caller passes ``include_private``. An ignored file (``CLAUDE.local.md``) or a
  file outside any repository takes private memories as they are.
* A memory holding a credential never goes in, whatever the flags (reported by rule label).
* Only current memories (not expired, superseded or retired) are included.
* The file is written with one atomic write keeping its mode; a symlink is followed only to a
  file inside the checkout; nothing outside the marked section changes.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memdir import marked_section
from memdir.atomic import atomic_write
from memdir.errors import BundleError, FrontmatterError, UnreadableFileError
from memdir.model import MemoryType
from memdir.paths import find_git_root
from memdir.pathsafe import is_within, read_regular
from memdir.team.secrets import labels, scan
from memdir.validity import current_only

DEFAULT_BUDGET = 8_000  # bytes: a fraction of Codex's 32 KiB project-doc cap, room for the rest
ENTRY_BODY_CHARS = 700
MAX_FILE_BYTES = 4 * 1024 * 1024
_TYPES = (MemoryType.FEEDBACK, MemoryType.USER)
_HEADINGS = {MemoryType.FEEDBACK: "### How to work", MemoryType.USER: "### About the user"}
_TRAILER_ROOM = 160


@dataclass(frozen=True, slots=True)
class Standing:
    path: str
    name: str
    description: str
    type: MemoryType
    body: str

    @property
    def team(self) -> bool:
        return self.path.startswith("team/")


@dataclass(frozen=True)
class SectionPlan:
    """What writing (or removing) the section does to ``file``; ``text`` None deletes it."""

    file: Path
    text: str | None
    changed: bool
    committed: bool  # git would commit the file
    included: tuple[str, ...] = ()
    private_left_out: tuple[str, ...] = ()
    secrets_left_out: tuple[tuple[str, tuple[str, ...]], ...] = ()
    over_budget: tuple[str, ...] = ()
    section_bytes: int = 0
    mode: int = 0o644


def standing_memories(memory_dir: Path) -> list[Standing]:
    """Current feedback and user memories, in section order."""
    from memdir.store import MemoryStore

    store = MemoryStore(memory_dir)
    found: list[Standing] = []
    for header in current_only(store.scan(limit=None).headers):
        kind = MemoryType.parse(header.type)
        if kind is None or kind not in _TYPES or header.filename.startswith("logs/"):
            continue
        try:
            memory = store.read(header.filename)
        except (OSError, FrontmatterError, UnreadableFileError):
            continue  # doctor reports unreadable memories; a section is no place for them
        found.append(Standing(header.filename, memory.title, memory.description, kind, memory.body))
    found.sort(key=lambda s: (_TYPES.index(s.type), not s.team, s.path))
    return found


def _entry(item: Standing, *, with_body: bool) -> str:
    lead = f"- **{' '.join(item.name.split())}**"
    description = " ".join(item.description.split())
    lines = [f"{lead}: {description}" if description else lead]
    body = item.body.strip()
    if with_body and body:
        if len(body) > ENTRY_BODY_CHARS:
            cut = body.rfind("\n", 0, ENTRY_BODY_CHARS)
            body = (
                body[: cut if cut > 0 else ENTRY_BODY_CHARS].rstrip() + f"\n(more in {item.path})"
            )
        lines += [f"  {line}".rstrip() for line in body.splitlines() if line.strip()]
    return "\n".join(lines) + "\n"


def render_section(items: list[Standing], budget: int) -> tuple[str, list[str], list[str]]:
    """(section body, paths included, paths left out for the budget). Entries lose their body
    before they are left out; the budget counts the markers too."""
    head = (
        "## Standing instructions (from memdir)\n\n"
        "Feedback and preferences kept in memdir's memory; follow them like the rest of this "
        "file. Edit the memories, not this section: `memdir export agents-md` rewrites it.\n"
    )
    used = len(head.encode()) + len(marked_section.begin_line(frozenset()).encode())
    used += len(marked_section.END_LINE.encode()) + 2
    parts, included, left = [head], [], []
    heading: MemoryType | None = None
    for item in items:
        title = f"\n{_HEADINGS[item.type]}\n\n" if item.type != heading else ""
        for with_body in (True, False):
            text = title + _entry(item, with_body=with_body)
            if used + len(text.encode()) + _TRAILER_ROOM <= budget:
                parts.append(text)
                used += len(text.encode())
                included.append(item.path)
                heading = item.type
                break
        else:
            left.append(item.path)
    if left:
        parts.append(f"\n…and {len(left)} more not shown (size budget); see `memdir list`.\n")
    return "".join(parts), included, left


def would_commit(path: Path) -> bool:
    """Whether git would commit ``path``: tracked, or untracked and not ignored. Fails closed."""
    root = find_git_root(path.parent)
    if root is None:
        return False
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "check-ignore", "-q", "--", str(path)],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return True
    return proc.returncode != 0  # 0: ignored; 1: not ignored; 128: git failed (assume committed)


def resolve_target(file: Path, checkout: Path) -> Path:
    """The file to edit: ``file`` itself, or the file its symlink names inside ``checkout``."""
    if not file.is_symlink():
        return file
    real = Path(os.path.realpath(file))
    if not is_within(Path(os.path.realpath(checkout)), real):
        raise BundleError(f"{file} is a symlink to {real}, outside {checkout}; not followed")
    return real


def _read(file: Path) -> tuple[str | None, int | None]:
    try:
        data = read_regular(file, limit=MAX_FILE_BYTES + 1)
        mode = stat.S_IMODE(os.stat(file).st_mode)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        raise BundleError(f"cannot read {file}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise BundleError(f"{file} is larger than {MAX_FILE_BYTES} bytes; not edited")
    try:
        return data.decode("utf-8"), mode
    except UnicodeDecodeError:
        raise BundleError(f"{file} is not UTF-8 text; memdir edits only text files") from None


def plan_section(
    memory_dir: Path,
    file: Path,
    *,
    include_private: bool = False,
    budget: int = DEFAULT_BUDGET,
    remove: bool = False,
) -> SectionPlan:
    """What ``memdir export agents-md`` would do to ``file`` (already resolved)."""
    old, mode = _read(file)
    committed = would_commit(file)
    if remove:
        new = marked_section.remove(old, str(file)) if old is not None else old
        return SectionPlan(file, new, new != old, committed, mode=mode or 0o644)
    chosen, private, secrets = [], [], []
    for item in standing_memories(memory_dir):
        found = labels(scan(f"{item.name}\n{item.description}\n{item.body}"))
        if found:
            secrets.append((item.path, tuple(found)))
        elif not item.team and committed and not include_private:
            private.append(item.path)
        else:
            chosen.append(item)
    body, included, left = render_section(chosen, budget)
    if not included and (old is None or marked_section.find(old, str(file)) is None):
        new = old  # nothing to say and no section to refresh: leave the file alone
    else:
        new = marked_section.upsert(old, body, str(file))
    has_private = any(not s.team for s in chosen if s.path in set(included))
    return SectionPlan(
        file,
        new,
        new != old,
        committed,
        included=tuple(included),
        private_left_out=tuple(private),
        secrets_left_out=tuple(secrets),
        over_budget=tuple(left),
        section_bytes=len(body.encode()),
        mode=mode if mode is not None else (0o600 if has_private else 0o644),
    )


def apply_plan(plan: SectionPlan) -> None:
    """Write the planned text (atomically, keeping the file's mode), or delete the file."""
    if not plan.changed:
        return
    if plan.text is None:
        plan.file.unlink(missing_ok=True)
    else:
        atomic_write(plan.file, plan.text, mode=plan.mode)
