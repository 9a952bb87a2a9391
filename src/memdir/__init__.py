"""memdir: durable, file-based memory for LLM agents.

Every memory is a Markdown file with YAML frontmatter; ``MEMORY.md`` is the maintained index.
This module is the public API; everything else is reachable but may change between releases.

Names are imported on first use (PEP 562): ``import memdir.anything`` runs this file first, and
hook commands that start a Python process on every prompt must not pay for recall, prompts and
the LLM layer they never touch. To add a public name, add it to ``_EXPORTS`` and ``__all__``.
"""

from __future__ import annotations

import importlib as _importlib

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs every hook process
if TYPE_CHECKING:
    from typing import Any

    from memdir.config import Settings, load_settings
    from memdir.errors import (
        ConfigError,
        ConflictError,
        DreamError,
        EditError,
        FrontmatterError,
        LockHeldError,
        MemdirError,
        MemoryExistsError,
        MemoryNotFoundError,
        MissingExtraError,
        PathTraversalError,
        PrivateSecretError,
        ProviderError,
        SecretFoundError,
        SyncError,
        UnreadableFileError,
        UnsafePathError,
    )
    from memdir.index import load_for_prompt
    from memdir.model import Memory, MemoryHeader, MemoryType
    from memdir.paths import ResolvedPaths, resolve_paths
    from memdir.prompts import build_memory_prompt, build_prompt_for_paths
    from memdir.recall.engine import MemoryRecall
    from memdir.recall.factory import build_recall
    from memdir.recall.prefetch import RecallPrefetch
    from memdir.recall.session import RecallSession
    from memdir.recall.surface import Attachment
    from memdir.scan import format_manifest, scan_headers
    from memdir.store import MemoryStore

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "Settings": "memdir.config",
    "load_settings": "memdir.config",
    **dict.fromkeys(
        (
            "ConfigError",
            "ConflictError",
            "DreamError",
            "EditError",
            "FrontmatterError",
            "LockHeldError",
            "MemdirError",
            "MemoryExistsError",
            "MemoryNotFoundError",
            "MissingExtraError",
            "PathTraversalError",
            "PrivateSecretError",
            "ProviderError",
            "SecretFoundError",
            "SyncError",
            "UnreadableFileError",
            "UnsafePathError",
        ),
        "memdir.errors",
    ),
    "load_for_prompt": "memdir.index",
    "Memory": "memdir.model",
    "MemoryHeader": "memdir.model",
    "MemoryType": "memdir.model",
    "ResolvedPaths": "memdir.paths",
    "resolve_paths": "memdir.paths",
    "build_memory_prompt": "memdir.prompts",
    "build_prompt_for_paths": "memdir.prompts",
    "MemoryRecall": "memdir.recall.engine",
    "build_recall": "memdir.recall.factory",
    "RecallPrefetch": "memdir.recall.prefetch",
    "RecallSession": "memdir.recall.session",
    "Attachment": "memdir.recall.surface",
    "format_manifest": "memdir.scan",
    "scan_headers": "memdir.scan",
    "MemoryStore": "memdir.store",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memdir' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


del TYPE_CHECKING


__all__ = [
    "Attachment",
    "ConfigError",
    "ConflictError",
    "DreamError",
    "EditError",
    "FrontmatterError",
    "LockHeldError",
    "MemdirError",
    "Memory",
    "MemoryExistsError",
    "MemoryHeader",
    "MemoryNotFoundError",
    "MemoryRecall",
    "MemoryStore",
    "MemoryType",
    "MissingExtraError",
    "PathTraversalError",
    "PrivateSecretError",
    "ProviderError",
    "RecallPrefetch",
    "RecallSession",
    "ResolvedPaths",
    "SecretFoundError",
    "Settings",
    "SyncError",
    "UnreadableFileError",
    "UnsafePathError",
    "__version__",
    "build_memory_prompt",
    "build_prompt_for_paths",
    "build_recall",
    "format_manifest",
    "load_for_prompt",
    "load_settings",
    "resolve_paths",
    "scan_headers",
]
