"""The bundle's container: a deterministic ``.tar.gz`` written whole, read back under hard caps.

Why tar.gz and not zip: a memory dir is thousands of small Markdown files that share frontmatter
keys and phrasing; gzip over the whole tar compresses them together (zip compresses each entry
alone and adds ~100 bytes of headers per entry), ``tar xzf`` opens it on every system memdir
runs on (Windows 10+ ships ``tar.exe``), and memdir's dream snapshots are tar already.

Determinism (same files in, same bytes out): members in sorted order, the manifest first;
ustar/pax headers with uid/gid 0, no user or group names, mode 0600, integer mtimes taken from
the manifest (never the clock); gzip with mtime 0 and no file name in its header.

Reading trusts nothing: the whole archive is read into memory once (so two passes see the same
bytes even if the file changes meanwhile), the *decompressed* stream is capped (a gzip bomb or a
huge pax header stops at the cap, before it is held in memory), every member must be a regular
file with a safe UTF-8 name and a size under the per-file and total caps, and names may not
repeat. Any failure is one :class:`~memdir.errors.BundleError` line.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import BundleError, UnsafePathError
from memdir.pathsafe import check_relative, open_regular

MANIFEST_NAME = "manifest.json"
FILES_PREFIX = "memory/"
# What dream distilled from the daily logs: not derivable, so it travels. The same name as
# memdir.consolidate.logs.DISTILLED_NAME (not imported: that package loads the dream machinery).
DISTILLED_NAME = "logs/.distilled.json"
_HEADER_ROOM = 3 * 512  # a member's tar header, a pax header block and padding, at most
_GZIP_LEVEL = 6


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps a bundle must stay under, written and read (so memdir never writes what it refuses)."""

    max_file_bytes: int = 64 * 1024 * 1024
    max_total_bytes: int = 512 * 1024 * 1024
    max_files: int = 100_000

    @property
    def max_stream_bytes(self) -> int:
        """Decompressed tar bytes allowed: the payload plus header room for every member."""
        return self.max_total_bytes + (self.max_files + 2) * _HEADER_ROOM + 1024 * 1024


DEFAULT_LIMITS = Limits()


def check_member_name(rel: str) -> str:
    """A bundle member's name relative to the memory dir, or BundleError.

    Stricter than a memory name: no control characters (a newline or escape in a file name
    breaks MEMORY.md links and terminals), and hidden segments only as ``logs/.distilled.json``.
    """
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in rel):
        raise BundleError(f"unsafe name {rel!a} in the bundle: control character or NUL")
    try:
        clean = check_relative(rel)
    except UnsafePathError as exc:
        raise BundleError(f"unsafe name in the bundle: {exc}") from None
    if clean != rel:
        raise BundleError(f"unsafe name {rel!r} in the bundle: not in normal form")
    if any(part.startswith(".") for part in rel.split("/")) and rel != DISTILLED_NAME:
        raise BundleError(f"unsafe name {rel!r} in the bundle: a hidden path")
    return rel


def _info(name: str, size: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = max(0, mtime)
    info.mode = 0o600
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.type = tarfile.REGTYPE
    return info


def write_archive(manifest: bytes, files: Iterable[tuple[str, bytes, int]], mtime: int) -> bytes:
    """The archive bytes: ``manifest.json`` first, then each ``(rel, data, mtime)`` in order."""
    raw = io.BytesIO()
    with (
        gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=_GZIP_LEVEL
        ) as gz,
        tarfile.open(fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT, encoding="utf-8") as tf,
    ):
        tf.addfile(_info(MANIFEST_NAME, len(manifest), mtime), io.BytesIO(manifest))
        for rel, data, file_mtime in files:
            tf.addfile(_info(FILES_PREFIX + rel, len(data), file_mtime), io.BytesIO(data))
    return raw.getvalue()


def read_archive_bytes(path: Path, limits: Limits) -> bytes:
    """The compressed bytes of ``path``: a regular file no larger than the stream cap (its size
    is checked before anything is read, so a huge file costs nothing to refuse)."""
    try:
        with open(open_regular(path), "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > limits.max_stream_bytes:
                raise BundleError(
                    f"{path} is {size} bytes, larger than a bundle may be "
                    f"({limits.max_stream_bytes} bytes)"
                )
            data = fh.read(limits.max_stream_bytes + 1)
    except FileNotFoundError:
        raise BundleError(f"no bundle at {path}") from None
    except OSError as exc:
        raise BundleError(f"cannot read the bundle {path}: {exc.strerror or exc}") from None
    if len(data) > limits.max_stream_bytes:  # it grew while being read
        raise BundleError(
            f"{path} is larger than a bundle may be ({limits.max_stream_bytes} bytes)"
        )
    return data


class _Capped(io.RawIOBase):
    """A read-only stream that fails once more than ``cap`` bytes came out of ``inner``."""

    def __init__(self, inner: gzip.GzipFile, cap: int):
        self._inner = inner
        self._left = cap

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        want = self._left + 1 if size is None or size < 0 else min(size, self._left + 1)
        chunk = self._inner.read(want)
        self._left -= len(chunk)
        if self._left < 0:
            raise BundleError("the bundle expands past its size cap (a decompression bomb?)")
        return chunk


def iter_members(data: bytes, limits: Limits) -> Iterator[tuple[str, bytes]]:
    """``(name, content)`` of each member, the manifest first; raises BundleError on anything
    but regular files with safe names inside the caps."""
    stream = _Capped(gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb"), limits.max_stream_bytes)
    seen: set[str] = set()
    total = 0
    try:
        with tarfile.open(
            fileobj=stream, mode="r|", encoding="utf-8", errors="surrogateescape"
        ) as tf:
            for member in tf:
                name = _member_name(member, first=not seen)
                if name in seen:
                    raise BundleError(f"{name!r} appears twice in the bundle")
                seen.add(name)
                if len(seen) > limits.max_files + 1:
                    raise BundleError(f"the bundle holds more than {limits.max_files} files")
                if member.size > limits.max_file_bytes:
                    raise BundleError(
                        f"{name!r} in the bundle is {member.size} bytes, over the "
                        f"{limits.max_file_bytes}-byte cap per file"
                    )
                total += member.size
                if total > limits.max_total_bytes:
                    raise BundleError(
                        f"the bundle's files add up to more than {limits.max_total_bytes} bytes"
                    )
                fh = tf.extractfile(member)
                content = fh.read() if fh is not None else b""
                if len(content) != member.size:
                    raise BundleError(f"{name!r} is truncated in the bundle")
                yield name, content
    except (tarfile.TarError, gzip.BadGzipFile, zlib.error, EOFError) as exc:
        raise BundleError(
            f"not a readable memdir bundle (corrupt or not a .tar.gz): {exc}"
        ) from None
    if not seen:
        raise BundleError("the bundle is empty (no manifest.json)")


def _member_name(member: tarfile.TarInfo, *, first: bool) -> str:
    name = member.name
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise BundleError(f"a name in the bundle is not UTF-8: {name!a}") from None
    if not (member.isreg() and not member.issparse()):
        kind = _KINDS.get(member.type, f"type {member.type!r}")
        raise BundleError(f"{name!r} in the bundle is a {kind}; only regular files are restored")
    if first:
        if name != MANIFEST_NAME:
            raise BundleError(f"the bundle must start with {MANIFEST_NAME}, not {name!r}")
        return name
    if not name.startswith(FILES_PREFIX):
        raise BundleError(f"{name!r} in the bundle is outside {FILES_PREFIX}")
    return FILES_PREFIX + check_member_name(name[len(FILES_PREFIX) :])


_KINDS = {
    tarfile.SYMTYPE: "symbolic link",
    tarfile.LNKTYPE: "hard link",
    tarfile.CHRTYPE: "character device",
    tarfile.BLKTYPE: "block device",
    tarfile.FIFOTYPE: "FIFO",
    tarfile.DIRTYPE: "directory",
    tarfile.CONTTYPE: "contiguous file",
    tarfile.GNUTYPE_SPARSE: "sparse file",
}
