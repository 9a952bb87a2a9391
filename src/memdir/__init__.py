"""memdir: durable, file-based memory for LLM agents.

Every memory is a Markdown file with YAML frontmatter; ``MEMORY.md`` is the maintained index.
"""

from __future__ import annotations

from memdir.errors import (
    ConfigError,
    ConflictError,
    EditError,
    FrontmatterError,
    LockHeldError,
    MemdirError,
    MemoryExistsError,
    MemoryNotFoundError,
    SecretFoundError,
    UnreadableFileError,
    UnsafePathError,
)
from memdir.model import Memory, MemoryHeader, MemoryType
from memdir.store import MemoryStore

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "ConflictError",
    "EditError",
    "FrontmatterError",
    "LockHeldError",
    "MemdirError",
    "Memory",
    "MemoryExistsError",
    "MemoryHeader",
    "MemoryNotFoundError",
    "MemoryStore",
    "MemoryType",
    "SecretFoundError",
    "UnreadableFileError",
    "UnsafePathError",
    "__version__",
]
