"""Anthropic memory tool (``memory_20250818``) backed by a memdir memory directory.

``MemdirMemoryTool(store)`` subclasses the SDK's ``BetaAbstractMemoryTool`` (and
``MemdirAsyncMemoryTool`` its async twin), so it drops into
``client.beta.messages.tool_runner(tools=[...])`` like the SDK's own local implementation, but
every write is atomic, path-checked, guarded and indexed in MEMORY.md (see
:mod:`memdir.adapters.memory_commands`, which holds the command logic).

Errors: every :class:`~memdir.errors.MemdirError` becomes the SDK's ``ToolError`` with the same
text the SDK would send, which the tool runner returns to the model as an ``is_error`` result.
An unexpected OS error is reported by its kind only, never with a path outside the memory dir.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast

from memdir.adapters.memory_commands import MemoryCommands
from memdir.errors import MemdirError, MissingExtraError
from memdir.store import MemoryStore
from memdir.team.guard import collect_credential_notes, guarded_store

try:
    from anthropic.lib.tools import ToolError
    from anthropic.tools.memory import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool
    from anthropic.types.beta import (
        BetaCacheControlEphemeralParam,
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )
    from anyio.to_thread import run_sync
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("anthropic", "anthropic") from exc

T = TypeVar("T")


def _as_tool_error(fn: Callable[[], T]) -> T:
    """Run one command; turn our errors into the SDK's ``ToolError`` (the one mapping point)."""
    try:
        with collect_credential_notes() as notes:
            result = fn()
        if notes and isinstance(result, str):  # the model should know what it just stored
            return cast(T, result + "".join(f"\nNote: {n}" for n in dict.fromkeys(notes)))
        return result
    except MemdirError as exc:
        raise ToolError(_printable(str(exc))) from exc
    except OSError as exc:
        raise ToolError(
            f"{type(exc).__name__}: {exc.strerror or 'operating system error'}"
        ) from exc
    except UnicodeError as exc:  # a lone surrogate that reached an encoder
        raise ToolError("invalid text: not valid Unicode (a lone surrogate)") from exc


def _printable(text: str) -> str:
    # A message may quote a hostile path; lone surrogates in it could not be sent as JSON/UTF-8.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class MemdirMemoryTool(BetaAbstractMemoryTool):
    """The memory tool on a :class:`MemoryStore`; ``/memories`` is the store's root."""

    def __init__(
        self,
        store: MemoryStore,
        *,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.commands = MemoryCommands(store)

    @classmethod
    def for_dir(
        cls, root: Path, *, cache_control: BetaCacheControlEphemeralParam | None = None
    ) -> MemdirMemoryTool:
        """The tool on ``root`` through :func:`guarded_store` (credentials kept out of team/)."""
        return cls(guarded_store(root), cache_control=cache_control)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return _as_tool_error(lambda: self.commands.view(command.path, command.view_range))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return _as_tool_error(lambda: self.commands.create(command.path, command.file_text))

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return _as_tool_error(
            lambda: self.commands.str_replace(command.path, command.old_str, command.new_str)
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return _as_tool_error(
            lambda: self.commands.insert(command.path, command.insert_line, command.insert_text)
        )

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return _as_tool_error(lambda: self.commands.delete(command.path))

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return _as_tool_error(lambda: self.commands.rename(command.old_path, command.new_path))


class MemdirAsyncMemoryTool(BetaAsyncAbstractMemoryTool):
    """The same tool for ``AsyncAnthropic``: each command runs in a worker thread, because file
    I/O and the store lock would otherwise block the event loop."""

    def __init__(
        self,
        store: MemoryStore,
        *,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.commands = MemoryCommands(store)

    @classmethod
    def for_dir(
        cls, root: Path, *, cache_control: BetaCacheControlEphemeralParam | None = None
    ) -> MemdirAsyncMemoryTool:
        """The tool on ``root`` through :func:`guarded_store` (credentials kept out of team/)."""
        return cls(guarded_store(root), cache_control=cache_control)

    async def _run(self, fn: Callable[[], str]) -> str:
        return await run_sync(_as_tool_error, fn)

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self._run(lambda: self.commands.view(command.path, command.view_range))

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self._run(lambda: self.commands.create(command.path, command.file_text))

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self._run(
            lambda: self.commands.str_replace(command.path, command.old_str, command.new_str)
        )

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self._run(
            lambda: self.commands.insert(command.path, command.insert_line, command.insert_text)
        )

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self._run(lambda: self.commands.delete(command.path))

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self._run(lambda: self.commands.rename(command.old_path, command.new_path))


__all__ = ["MemdirAsyncMemoryTool", "MemdirMemoryTool", "guarded_store"]
