"""The one path-safety module: every path from a model, a user, a setting or a server.

Invariant: :func:`resolve_inside` returns an absolute path that is lexically *and* physically
(after following every symlink that exists) inside ``root``, or raises
:class:`~memdir.errors.UnsafePathError`. Nothing is created or written here.

Rejected: empty names, NUL bytes, lone surrogates (non-UTF-8 bytes from a command line),
segments over 255 bytes, whole paths of 4,096 bytes or more (the OS's ENAMETOOLONG), absolute
paths, backslashes, ``..`` segments, URL-encoded or full-width (NFKC) spellings of
separators/dots, symlinks anywhere along the path that lead outside the root, dangling symlinks,
symlink loops. Unexpected OS errors fail closed.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
import urllib.parse
from pathlib import Path, PurePosixPath

from memdir.errors import NotRegularFileError, UnsafePathError

NAME_MAX = 255  # bytes in one path segment, the limit of every filesystem memdir targets
PATH_MAX = 4096  # bytes in a whole path (Linux; macOS allows 1024 and fails later, still cleanly)


def check_relative(rel: str, *, error: type[UnsafePathError] = UnsafePathError) -> str:
    """Validate a relative name and return it normalised to POSIX form (no leading ./)."""
    if not isinstance(rel, str) or not rel.strip():
        raise error("empty path")
    if "\x00" in rel:
        raise error("path contains a NUL byte")
    try:
        encoded = rel.encode("utf-8")
    except UnicodeEncodeError:
        raise error(f"path {rel!a} is not valid UTF-8 (a lone surrogate)") from None
    for part in encoded.split(b"/"):
        if len(part) > NAME_MAX:
            raise error(f"name too long: {len(part)} bytes in one path segment (limit {NAME_MAX})")
    if len(encoded) >= PATH_MAX:
        raise error(f"path too long: {len(encoded)} bytes (limit {PATH_MAX})")
    try:
        decoded = urllib.parse.unquote(rel, errors="strict")
    except UnicodeDecodeError:
        decoded = rel
    if decoded != rel and (".." in decoded or "/" in decoded or "\\" in decoded):
        raise error(f"URL-encoded traversal in path {rel!r}")
    folded = unicodedata.normalize("NFKC", rel)
    if folded != rel and any(tok in folded for tok in ("..", "/", "\\", "\x00")):
        raise error(f"Unicode-normalised traversal in path {rel!r}")
    if "\\" in rel:
        raise error(f"backslash in path {rel!r}")
    if rel.startswith("/") or (len(rel) > 1 and rel[1] == ":"):
        raise error(f"absolute path {rel!r} not allowed")
    parts = [p for p in PurePosixPath(rel).parts if p not in ("", ".")]
    if not parts:
        raise error(f"path {rel!r} names the root itself")
    if any(p == ".." for p in parts):
        raise error(f"path {rel!r} contains '..'")
    return "/".join(parts)


def realpath_deepest_existing(
    path: Path, *, error: type[UnsafePathError] = UnsafePathError
) -> Path:
    """``realpath`` of the deepest existing ancestor of ``path``, with the missing tail re-joined.

    A dangling symlink or a symlink loop along the way raises; unexpected errors fail closed.
    """
    tail: list[str] = []
    current = path
    while True:
        try:
            resolved = Path(os.path.realpath(current, strict=True))
            return resolved.joinpath(*reversed(tail)) if tail else resolved
        except FileNotFoundError:
            if current.is_symlink():
                raise error(f"dangling symlink at {current}") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise error(f"symlink loop at {current}") from None
            if exc.errno not in (errno.ENOTDIR, errno.ENAMETOOLONG):
                raise error(f"cannot resolve {current}: {exc.strerror}") from None
        except RuntimeError:  # some Python versions report loops this way
            raise error(f"symlink loop at {current}") from None
        parent = current.parent
        if parent == current:
            raise error(f"cannot resolve any part of {path}")
        tail.append(current.name)
        current = parent


def is_within(root: Path, path: Path) -> bool:
    """True when ``path`` equals ``root`` or lies below it (both taken as given)."""
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def resolve_inside(root: Path, rel: str, *, error: type[UnsafePathError] = UnsafePathError) -> Path:
    """The absolute path for ``rel`` under ``root``, guaranteed not to escape it."""
    clean = check_relative(rel, error=error)
    root_abs = Path(os.path.abspath(root))
    target = root_abs / clean
    size = len(os.fsencode(target))
    if size >= PATH_MAX:  # the OS would refuse it with a raw ENAMETOOLONG further down
        raise error(f"path too long: {size} bytes under {root} (limit {PATH_MAX})")
    if not is_within(root_abs, Path(os.path.normpath(target))):
        raise error(f"path {rel!r} escapes {root}")
    real_root = realpath_deepest_existing(root_abs, error=error)
    real_target = realpath_deepest_existing(target, error=error)
    if real_target == real_root or not is_within(real_root, real_target):
        raise error(f"path {rel!r} resolves outside {root} (symlink escape)")
    return target


def open_inside(real_root: Path, path: Path | str) -> int:
    """Open ``path`` for reading only if it physically lies inside ``real_root``; return the fd.

    ``real_root`` must already be a realpath. The check and the open use the same resolved path,
    opened with ``O_NOFOLLOW`` where the OS has it, so a file swapped for a symlink in between
    fails instead of being followed. Raises :class:`UnsafePathError` for an escape, ``OSError``
    for anything else (including a target that is not a regular file).
    """
    try:
        real = os.path.realpath(path, strict=True)
    except (OSError, RuntimeError) as exc:
        raise UnsafePathError(f"cannot resolve {path}: {exc}") from None
    if not is_within(real_root, Path(real)) or Path(real) == real_root:
        raise UnsafePathError(f"{path} is a symlink that resolves outside {real_root}")
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: Path | str, *, follow_symlinks: bool = True) -> int:
    """Open ``path`` read-only if it is a regular file; return the fd. Never blocks.

    A FIFO, socket or device at a path memdir reads (MEMORY.md, a transcript, a settings file)
    would block ``open``/``read`` until the host's timeout; ``O_NONBLOCK`` makes the open return
    at once and the ``fstat`` check refuses it. Raises :class:`NotRegularFileError` (an
    :class:`UnreadableFileError` and an ``OSError``) for a non-regular file (and for a symlink
    when ``follow_symlinks`` is false), ``OSError`` when the path cannot be opened at all.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow_symlinks and exc.errno == errno.ELOOP:
            raise NotRegularFileError(path, "is a symlink") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFileError(path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(
    path: Path | str, *, limit: int | None = None, follow_symlinks: bool = True
) -> bytes:
    """The bytes of the regular file at ``path`` (at most ``limit``), never blocking: what every
    reader of a path memdir did not create uses. Errors as :func:`open_regular`."""
    with open(open_regular(path, follow_symlinks=follow_symlinks), "rb") as fh:
        return fh.read() if limit is None else fh.read(limit)


def relative_to_root(root: Path, path: Path | str) -> str:
    """Turn an absolute path (or a relative one) into a checked name relative to ``root``."""
    p = Path(path)
    if p.is_absolute():
        root_abs = Path(os.path.abspath(root))
        norm = Path(os.path.normpath(p))
        if not is_within(root_abs, norm) or norm == root_abs:
            raise UnsafePathError(f"{path} is outside {root}")
        rel = norm.relative_to(root_abs).as_posix()
    else:
        rel = str(path)
    resolve_inside(root, rel)
    return check_relative(rel)
