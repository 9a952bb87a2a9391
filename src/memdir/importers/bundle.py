"""``memdir import bundle ARCHIVE``: restore memdir's own export bundle.

The bundle's format and its byte-for-byte restore belong to :mod:`memdir.bundle` (written with
``memdir export``); this module only hands the archive over, lazily, so the import command
works (and says clearly what is missing) whether or not that module is installed.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from memdir.errors import ImportSourceError


def restore(archive: Path, memory_dir: Path, *, dry_run: bool) -> Any:
    """Call ``memdir.bundle.restore_bundle(archive, memory_dir, dry_run)``."""
    try:
        module = importlib.import_module("memdir.bundle")
    except ModuleNotFoundError as exc:
        if exc.name not in ("memdir.bundle", "memdir"):
            raise
        raise ImportSourceError(
            "this memdir has no bundle support (memdir.bundle is missing); "
            "upgrade memdir to import an export bundle"
        ) from None
    restore_bundle = getattr(module, "restore_bundle", None)
    if restore_bundle is None:
        raise ImportSourceError("memdir.bundle has no restore_bundle(); upgrade memdir")
    if not archive.is_file():
        raise ImportSourceError(f"no bundle archive at {archive}")
    return restore_bundle(archive, memory_dir, dry_run)
