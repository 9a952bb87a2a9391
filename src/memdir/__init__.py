"""memdir: durable, file-based memory for LLM agents.

Every memory is a Markdown file with YAML frontmatter; ``MEMORY.md`` is the maintained index.
This module is the public API; everything else is reachable but may change between releases.
"""

from __future__ import annotations

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
