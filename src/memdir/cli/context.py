"""What every command receives: the injected environment, cwd, output and global flags.

Only this layer (and other entry points) reads ``os.environ`` and settings files; the library
receives resolved values.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.cli.output import Output
from memdir.config import Settings, load_settings
from memdir.paths import ResolvedPaths, resolve_paths

if TYPE_CHECKING:  # imported in store(): hook commands on the per-prompt path never need it
    from memdir.store import MemoryStore


@dataclass
class CliContext:
    env: Mapping[str, str]
    cwd: Path
    out: Output
    args: argparse.Namespace = field(default_factory=argparse.Namespace)

    @functools.cached_property
    def settings(self) -> Settings:
        flags = self.args
        return load_settings(
            self.env,
            cwd=self.cwd,
            flag_settings=getattr(flags, "settings", None),
            claude_mode=bool(getattr(flags, "claude", False)),
            memory_dir_flag=getattr(flags, "dir", None),
        )

    @functools.cached_property
    def paths(self) -> ResolvedPaths:
        return resolve_paths(self.settings, cwd=self.cwd)

    @property
    def memory_dir(self) -> Path:
        return self.paths.memory_dir

    def store(self) -> MemoryStore:
        """The store for the resolved memory dir, with the credential guards installed."""
        from memdir.team.guard import guarded_store

        return guarded_store(
            self.memory_dir,
            private_secrets=self.settings.private_secrets,
            header_cache=self.paths.cache_dir / "headers.json",
        )
