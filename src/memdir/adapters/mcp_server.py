"""The memdir MCP server: a memory dir as tools, resources and a prompt for any MCP client.

``build_server(store, ...)`` returns an ``MCPServer`` (official ``mcp`` SDK); ``serve`` runs it
over stdio or streamable HTTP bound to loopback. The server never reads the environment: the
CLI (``memdir mcp``) resolves the memory and cache dirs and passes a store in.

Invariants:
- Errors are mapped in one place (:func:`tool_errors`): a :class:`~memdir.errors.MemdirError`
  becomes an MCP tool error (``is_error``) whose text starts with a short label for its kind,
  then memdir's own message; nothing was written. Anything else is a crash the SDK reports
  without detail.
- The HTTP transport has no authentication, so it only binds to a loopback address.
- Tool behaviour lives in :mod:`memdir.adapters.mcp_tools`; this module is wiring.
"""

from __future__ import annotations

import functools
import inspect
import ipaddress
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from memdir import __version__
from memdir.adapters.mcp_tools import LIST_LIMIT, MemoryTools, SelectorFactory
from memdir.adapters.stdio_exit import exit_on_stop_signals
from memdir.errors import (
    ConfigError,
    ConflictError,
    EditError,
    FrontmatterError,
    LockHeldError,
    MemdirError,
    MemoryExistsError,
    MemoryNotFoundError,
    MissingExtraError,
    SecretFoundError,
    ToolDenied,
    UnreadableFileError,
    UnsafePathError,
)
from memdir.prompts import build_memory_prompt
from memdir.recall.base import MAX_SELECTED, Selector
from memdir.recall.factory import local_selector
from memdir.recall.keyword import KeywordSelector
from memdir.store import MemoryStore

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
    from pydantic import Field
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

P = ParamSpec("P")
R = TypeVar("R")
Transport = Literal["stdio", "http"]
MAX_LIST = 5_000
DEFAULT_HTTP_PORT = 8766  # the team sync server defaults to 8765

# Hints for clients that ask before running tools: reads never change anything, and every tool
# stays inside the memory dir (closed world).
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

# Looked up along the error's MRO: a subclass without its own entry takes its parent's label.
_LABELS: dict[type[BaseException], str] = {
    UnsafePathError: "unsafe path",
    MemoryNotFoundError: "not found",
    MemoryExistsError: "already exists",
    FrontmatterError: "invalid input",
    EditError: "edit failed",
    ConflictError: "conflict",
    LockHeldError: "busy",
    SecretFoundError: "refused",
    ToolDenied: "refused",
    UnreadableFileError: "unreadable",
    MissingExtraError: "missing extra",
    ConfigError: "configuration",
    MemdirError: "error",
}


def describe(exc: MemdirError) -> str:
    """``<kind>: <memdir message>`` — what the model reads when a tool fails."""
    label = next((_LABELS[c] for c in type(exc).__mro__ if c in _LABELS), "error")
    return f"{label}: {exc}"


def _mapped(exc: Exception) -> ToolError:
    if isinstance(exc, MemdirError):
        # A message may quote a hostile path: lone surrogates cannot travel as UTF-8 JSON.
        return ToolError(describe(exc).encode("utf-8", "backslashreplace").decode("utf-8"))
    if isinstance(exc, UnicodeError):
        return ToolError("invalid input: text is not valid Unicode (a lone surrogate)")
    assert isinstance(exc, OSError)
    return ToolError(f"os error: {exc.strerror or type(exc).__name__}")


def tool_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """The one place memdir errors become MCP tool errors (sync and async tools alike)."""
    if inspect.iscoroutinefunction(fn):
        afn: Callable[P, Awaitable[Any]] = fn

        @functools.wraps(fn)
        async def run_async(*args: P.args, **kwargs: P.kwargs) -> Any:
            try:
                return await afn(*args, **kwargs)
            except (MemdirError, OSError, UnicodeError) as exc:
                raise _mapped(exc) from exc

        return run_async  # type: ignore[return-value]

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except (MemdirError, OSError, UnicodeError) as exc:
            raise _mapped(exc) from exc

    return run


DEFAULT_INSTRUCTIONS = """\
This server is a durable, file-based memory: one Markdown file per memory, with a name, a
one-line description and a type (user: who the user is and how they like to work; feedback:
corrections and confirmed approaches; project: goals, decisions and deadlines not visible in the
code; reference: where to find things in external systems). MEMORY.md is the index, one line per
memory, kept up to date by the server.

Call memory_recall with the user's request before answering when past context may matter, and
memory_index to see everything at a glance. Save what will still be true and useful in a
later conversation (memory_save); do not save what the code, git history or the current
conversation already show. Update an existing memory (memory_edit, or memory_save with
overwrite) rather than writing a duplicate, and delete memories that turn out to be wrong.
Memories are point-in-time notes: verify an old memory against the current state before
relying on it."""


APPLIES_WHEN = (
    "3 to 8 short situations in which this memory must be recalled, phrased as the requests "
    "it governs, especially ones that never use its words (e.g. 'adding or installing a "
    "JavaScript dependency', 'deleting git branches', 'explaining a systems concept')"
)

TOOL_NOTES = """\
## Using the memory through MCP tools

Where you cannot write files directly, the memory_* tools do the same work safely: memory_save
(name, one-line description, type, body, and applies_when: the requests that should recall it),
memory_edit (exact-string replacement), memory_rename, memory_delete. They check paths, write
atomically and keep MEMORY.md in step, so never edit MEMORY.md yourself. memory_recall finds
the few memories relevant to a request; memory_index shows the whole index; memory_read returns
one memory with its age."""


def instructions_text(store: MemoryStore, mechanics: Callable[[], str] | None = None) -> str:
    """The memory mechanics prompt plus the tool notes.

    ``mechanics`` lets the entry point supply the settings-aware prompt (team or daily-log
    mode); without it, or when it yields nothing, the individual-mode prompt for the store.
    """
    text = mechanics() if mechanics is not None else ""
    if not text.strip():
        text = build_memory_prompt(store.root, skip_index=True)
    return f"{text.rstrip()}\n\n{TOOL_NOTES}\n"


def default_selector_factory(store: MemoryStore, cache_dir: Path | None) -> SelectorFactory:
    """The offline LocalSelector (index shared with ``memdir recall``), else keyword matching.

    Keyword matching serves when the ``recall`` extra is missing or there is no cache dir to keep
    the search index in.
    """

    def build() -> Selector:
        if cache_dir is not None:
            try:
                return local_selector(store.root, cache_dir)
            except (ImportError, MemdirError):
                pass
        return KeywordSelector()

    return build


PathArg = Annotated[str, Field(description="memory file path relative to the memory dir")]


def build_server(
    store: MemoryStore,
    *,
    cache_dir: Path | None = None,
    selector: Selector | SelectorFactory | None = None,
    mechanics: Callable[[], str] | None = None,
    warm: bool = False,
    project_root: Path | None = None,
) -> MCPServer:
    """An MCP server exposing ``store``'s memory dir (tools, MEMORY.md and instructions).

    ``warm``: start building the recall index now, in the background (``memdir mcp``), so the
    first ``memory_recall`` answers from what is ready instead of waiting for the build.
    """
    tools = MemoryTools(
        store,
        selector or default_selector_factory(store, cache_dir),
        header_cache=cache_dir / "headers.json" if cache_dir is not None else None,
        evidence=(project_root, cache_dir) if project_root is not None else None,
    )
    if warm:
        tools.warm()
    server: MCPServer = MCPServer(
        "memdir", version=__version__, instructions=DEFAULT_INSTRUCTIONS, log_level="WARNING"
    )

    @server.tool(
        description="Find the memories relevant to a query (at most 5), with content. Call it "
        "before starting a task and whenever earlier decisions, conventions or the user's "
        "preferences may matter; memories already shown in this conversation need no second "
        "call.",
        annotations=READ_ONLY,
    )
    @tool_errors
    async def memory_recall(
        query: Annotated[str, Field(description="what you need context for")],
        limit: Annotated[int, Field(ge=1, le=MAX_SELECTED)] = MAX_SELECTED,
    ) -> dict[str, Any]:
        return await tools.recall(query, limit)

    @server.tool(
        description="Read one memory: frontmatter fields, body, age and content hash.",
        annotations=READ_ONLY,
    )
    @tool_errors
    def memory_read(path: PathArg) -> dict[str, Any]:
        return tools.read(path)

    @server.tool(
        description="List memories (newest first), optionally of one type.", annotations=READ_ONLY
    )
    @tool_errors
    def memory_list(
        type: Annotated[str | None, Field(description="user|feedback|project|reference")] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIST)] = LIST_LIMIT,
    ) -> dict[str, Any]:
        return tools.list(type, limit)

    @server.tool(
        description="Save a memory (name, one-line description, type, body, and when it applies). "
        "Fails if the file exists unless overwrite is true; the path defaults to a slug of the "
        "name.",
        annotations=DESTRUCTIVE,  # overwrite=true replaces a file
    )
    @tool_errors
    def memory_save(
        name: str,
        description: Annotated[str, Field(description="one line: what this memory is for")],
        type: Annotated[str, Field(description="user|feedback|project|reference")],
        body: str,
        path: Annotated[str | None, Field(description="e.g. prefs/coffee.md")] = None,
        overwrite: bool = False,
        applies_when: Annotated[list[str] | None, Field(description=APPLIES_WHEN)] = None,
    ) -> dict[str, Any]:
        return tools.save(name, description, type, body, path, overwrite, applies_when)

    @server.tool(
        description="Replace an exact string in a memory; it must be unique unless "
        "replace_all is true.",
        annotations=WRITES,
    )
    @tool_errors
    def memory_edit(
        path: PathArg, old_string: str, new_string: str, replace_all: bool = False
    ) -> dict[str, Any]:
        return tools.edit(path, old_string, new_string, replace_all)

    @server.tool(
        description="Delete a memory file (its MEMORY.md line goes with it).",
        annotations=DESTRUCTIVE,
    )
    @tool_errors
    def memory_delete(path: PathArg) -> dict[str, Any]:
        return tools.delete(path)

    @server.tool(
        description="Rename or move a memory; refuses to overwrite an existing file.",
        annotations=WRITES,
    )
    @tool_errors
    def memory_rename(old_path: PathArg, new_path: PathArg) -> dict[str, Any]:
        return tools.rename(old_path, new_path)

    @server.tool(
        description="MEMORY.md, the one-line-per-memory index, as loaded into prompts.",
        annotations=READ_ONLY,
    )
    @tool_errors
    def memory_index() -> dict[str, Any]:
        return tools.index()

    @server.resource("memdir://index", name="MEMORY.md", mime_type="text/markdown")
    def index_resource() -> str:
        return str(tools.index()["content"])

    @server.resource("memdir://instructions", name="memory instructions", mime_type="text/markdown")
    def instructions_resource() -> str:
        return instructions_text(store, mechanics)

    # not "memory": Gemini CLI, Qwen Code and Claude Code have a built-in /memory command
    @server.prompt(name="memdir", description="How to use this memory, plus the current index.")
    def memory_prompt() -> str:
        return f"{instructions_text(store, mechanics)}\n\n# MEMORY.md\n\n{tools.index()['content']}"

    return server


def check_loopback(host: str) -> str:
    """Refuse a non-loopback bind: the HTTP transport has no authentication."""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ConfigError(
            f"refusing to serve MCP over HTTP on {host!r}: it has no authentication, so it binds "
            "to a loopback address only (127.0.0.1, ::1 or localhost)"
        )
    return host


def serve(
    server: MCPServer,
    transport: Transport,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_HTTP_PORT,
) -> None:
    """Run until the client disconnects (stdio: stdin EOF, or SIGINT / SIGTERM) or the process is
    stopped (http: uvicorn's own graceful shutdown)."""
    if transport == "stdio":
        exit_on_stop_signals()
        server.run("stdio")
    else:
        server.run("streamable-http", host=check_loopback(host), port=port)


__all__ = ["build_server", "check_loopback", "describe", "serve", "tool_errors"]
