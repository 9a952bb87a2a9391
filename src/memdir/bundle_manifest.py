"""The bundle's ``manifest.json``: what a bundle claims to hold, checked before it is believed.

Format version 1 (``format: "memdir-bundle"``)::

    {"format": "memdir-bundle", "format_version": 1, "memdir_version": "0.9.0",
     "exported_at": "2026-12-02T07:00:00Z", "scope": "all",
     "files": [{"path": "feedback_tests.md", "size": 312, "sha256": "<64 hex>",
                "mtime_ms": 1764658800000}, ...]}

``files`` is sorted by path and names every member under ``memory/`` in the archive, no more and
no fewer. Readers ignore keys they do not know (a later memdir may add some within version 1);
a higher ``format_version`` is refused, because it may mean files that must not be restored the
way version 1 restores them. Written with sorted keys and fixed separators, so the same files
give the same bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memdir.bundle_archive import check_member_name
from memdir.errors import BundleError

BUNDLE_FORMAT = "memdir-bundle"
BUNDLE_FORMAT_VERSION = 1
SCOPES = ("all", "private", "team")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True)
class BundleFile:
    """One file of the bundle: its path under the memory dir, size, SHA-256 and mtime (ms)."""

    path: str
    size: int
    sha256: str
    mtime_ms: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "size": self.size,
            "sha256": self.sha256,
            "mtime_ms": self.mtime_ms,
        }


@dataclass(frozen=True, slots=True)
class BundleManifest:
    memdir_version: str
    exported_at: str
    scope: str
    files: tuple[BundleFile, ...]
    format_version: int = BUNDLE_FORMAT_VERSION

    def to_json(self) -> bytes:
        payload = {
            "format": BUNDLE_FORMAT,
            "format_version": self.format_version,
            "memdir_version": self.memdir_version,
            "exported_at": self.exported_at,
            "scope": self.scope,
            "files": [f.as_dict() for f in self.files],
        }
        text = json.dumps(payload, sort_keys=True, ensure_ascii=False, indent=1)
        return (text + "\n").encode("utf-8")

    def summary(self) -> dict[str, Any]:
        """The manifest without its file list (for command output)."""
        return {
            "format_version": self.format_version,
            "memdir_version": self.memdir_version,
            "exported_at": self.exported_at,
            "scope": self.scope,
            "files": len(self.files),
            "bytes": sum(f.size for f in self.files),
        }


def parse_manifest(raw: bytes) -> BundleManifest:
    """The manifest in ``raw``, or BundleError naming the first thing wrong with it."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BundleError("the bundle's manifest.json is not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise BundleError(f"the bundle's manifest.json is not valid JSON ({exc})") from None
    except RecursionError:
        raise BundleError("the bundle's manifest.json is nested too deeply to read") from None
    if not isinstance(data, dict) or data.get("format") != BUNDLE_FORMAT:
        raise BundleError("not a memdir bundle (manifest.json has no format: memdir-bundle)")
    version = data.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BundleError(f"the bundle's format_version {version!r} is not a version number")
    if version > BUNDLE_FORMAT_VERSION:
        raise BundleError(
            f"the bundle has format version {version}, newer than this memdir reads "
            f"({BUNDLE_FORMAT_VERSION}); upgrade memdir to restore it"
        )
    scope = data.get("scope")
    if scope not in SCOPES:
        raise BundleError(f"the bundle's scope {scope!r} is not one of {', '.join(SCOPES)}")
    files = data.get("files")
    if not isinstance(files, list):
        raise BundleError("the bundle's manifest has no list of files")
    entries = tuple(_file(item) for item in files)
    paths = [f.path for f in entries]
    if len(set(paths)) != len(paths):
        raise BundleError("the bundle's manifest names a file twice")
    return BundleManifest(
        memdir_version=_text(data, "memdir_version"),
        exported_at=_text(data, "exported_at"),
        scope=scope,
        files=entries,
        format_version=version,
    )


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or len(value) > 200:
        raise BundleError(f"the bundle's manifest has no valid {key}")
    return value


def _count(item: dict[str, Any], key: str) -> int:
    value = item.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BundleError(f"a file in the bundle's manifest has a bad {key}: {value!r}")
    return value


def _file(item: Any) -> BundleFile:
    if not isinstance(item, dict) or not isinstance(item.get("path"), str):
        raise BundleError("a file entry in the bundle's manifest is not {path, size, sha256}")
    path = check_member_name(item["path"])
    digest = item.get("sha256")
    if not isinstance(digest, str) or not _SHA256.match(digest):
        raise BundleError(f"{path!r} in the bundle's manifest has no valid sha256")
    return BundleFile(path, _count(item, "size"), digest, _count(item, "mtime_ms"))
