"""Tools and toolsets: what a background agent can call, as data plus one async method each.

Invariant: :meth:`Toolset.call` never raises for anything the model did — an unknown tool, bad
input, a refused path, a failed write all come back as a :class:`ToolResult` with
``is_error=True`` and a message the model can act on. Policies (``memdir.agent.policy``) are
toolsets that wrap another toolset, so a sandbox is assembled by wrapping, never by flags on a
tool.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from memdir.errors import MemdirError, ToolDenied
from memdir.llm.base import ToolSpec


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call returns to the model.

    ``denied`` marks a refusal by a policy (as opposed to a tool failing); ``written_path`` is the
    absolute path a successful Edit/Write changed, so runners can report what an agent wrote.
    """

    content: str
    is_error: bool = False
    denied: bool = False
    written_path: Path | None = None


class ToolInputError(MemdirError):
    """The model sent input that does not fit the tool's schema.

    Internal to the agent package: :class:`ToolBox` turns it into an error result, so it never
    reaches a caller (which is why it is not in ``memdir.errors``).
    """


class Tool(Protocol):
    @property
    def spec(self) -> ToolSpec: ...

    async def run(self, input: Mapping[str, Any]) -> ToolResult: ...


class Toolset(Protocol):
    def specs(self) -> list[ToolSpec]: ...

    async def call(self, name: str, input: Mapping[str, Any]) -> ToolResult: ...


class ThreadedTool(abc.ABC):
    """Base for tools whose work is blocking file I/O: ``run_sync`` runs in a worker thread, so
    the event loop (shared with the user's agent) never stalls on a big grep or a store lock,
    and the runner's time limit stays live."""

    @abc.abstractmethod
    def run_sync(self, input: Mapping[str, Any]) -> ToolResult:
        """Do the tool's work (called in a worker thread)."""

    async def run(self, input: Mapping[str, Any]) -> ToolResult:
        return await asyncio.to_thread(self.run_sync, input)


def schema(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    """A closed JSON object schema for a tool's input."""
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


class ToolBox:
    """The base toolset: dispatches by name, turns every failure into an error result."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools = {tool.spec.name: tool for tool in tools}

    def specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    async def call(self, name: str, input: Mapping[str, Any]) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self._tools))
            return ToolResult(f"Unknown tool {name!r}; available tools: {known}", is_error=True)
        if not isinstance(input, Mapping):
            return ToolResult(f"{name}: tool input must be a JSON object", is_error=True)
        try:
            return await tool.run(input)
        except ToolDenied as exc:
            return ToolResult(f"{name} denied: {exc}", is_error=True, denied=True)
        except (MemdirError, OSError, ValueError) as exc:
            return ToolResult(f"{name} failed: {exc}", is_error=True)


class WrapperToolset:
    """A toolset that forwards to ``inner``; policies override ``specs``/``call``."""

    def __init__(self, inner: Toolset) -> None:
        self.inner = inner

    def specs(self) -> list[ToolSpec]:
        return self.inner.specs()

    async def call(self, name: str, input: Mapping[str, Any]) -> ToolResult:
        return await self.inner.call(name, input)


# --- input helpers ---------------------------------------------------------------------------


def get_str(input: Mapping[str, Any], key: str, *, default: str | None = None) -> str:
    value = input.get(key, default)
    if not isinstance(value, str):
        if value is None:
            raise ToolInputError(f"missing required parameter {key!r}")
        raise ToolInputError(f"parameter {key!r} must be a string")
    return value


def get_opt_str(input: Mapping[str, Any], key: str) -> str | None:
    value = input.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolInputError(f"parameter {key!r} must be a string")
    return value


def get_int(input: Mapping[str, Any], key: str, default: int, *, minimum: int = 0) -> int:
    value = input.get(key, default)
    if value is None:
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)  # small models often quote numbers
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ToolInputError(f"parameter {key!r} must be an integer")
    if value < minimum:
        raise ToolInputError(f"parameter {key!r} must be >= {minimum}")
    return int(value)


def get_bool(input: Mapping[str, Any], key: str, default: bool = False) -> bool:
    value = input.get(key, default)
    if value is None:
        return default
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise ToolInputError(f"parameter {key!r} must be true or false")
    return value


def resolve_input_path(raw: str, base: Path) -> Path:
    """An absolute path for a model-supplied path: absolute as given, relative under ``base``."""
    if "\x00" in raw:
        raise ToolInputError("path contains a NUL byte")
    if raw.startswith("~"):
        raise ToolInputError("'~' is not expanded; use an absolute path")
    path = Path(raw)
    return path if path.is_absolute() else base / path
