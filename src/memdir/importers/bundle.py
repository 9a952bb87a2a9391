"""``memdir import bundle ARCHIVE``: restore memdir's own export bundle.

The bundle's format and its byte-for-byte restore belong to :mod:`memdir.bundle` (written with
``memdir export``); this module hands the archive over and says what happened in plain data.
A bundle is restored as it was exported: its files are not re-planned, merged or filtered
like another tool's memories (that would break "byte for byte"); a file already in the dir with
other bytes is left untouched and reported as a conflict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memdir.bundle import restore_bundle
from memdir.errors import ImportSourceError


def restore(archive: Path, memory_dir: Path, *, dry_run: bool) -> dict[str, Any]:
    """Restore ``archive`` into ``memory_dir`` (BundleError: refused, nothing written)."""
    if not archive.is_file():
        raise ImportSourceError(f"no bundle archive at {archive}")
    result = restore_bundle(archive, memory_dir, dry_run)
    return {
        "dry_run": result.dry_run,
        "written": list(result.written),
        "skipped": list(result.skipped),
        "conflicting": list(result.conflicting),
        "reasons": dict(result.reasons),
        "bundle": result.manifest.summary(),
    }


def describe(result: dict[str, Any]) -> str:
    """One line per kind of outcome, for the terminal."""
    verb = "would write" if result["dry_run"] else "wrote"
    lines = [
        f"{verb} {len(result['written'])} file(s); {len(result['skipped'])} already there "
        f"with the same bytes; {len(result['conflicting'])} in the way (left untouched)"
    ]
    lines += [f"  conflict: {rel}: {why}" for rel, why in sorted(result["reasons"].items())]
    return "\n".join(lines)


__all__ = ["describe", "restore"]
