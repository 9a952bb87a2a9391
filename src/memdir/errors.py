"""Every exception memdir raises, in one tree.

Callers catch by class, never by message text::

    MemdirError
     ├── ConfigError              bad settings, bad env values, invalid memory-dir override
     ├── UnsafePathError          a path that would leave its root (traversal, NUL, symlink...)
     │    ├── PathTraversalError  a team-sync key or team write path that fails validation
     │    └── ReservedPathError   a hidden/control path (lock, temp, .git, .env) or MEMORY.md
     │                            used as a memory: never written
     ├── FrontmatterError         unparseable frontmatter (names file + line)
     ├── MemoryNotFoundError      the memory (or file) does not exist
     ├── MemoryExistsError        create/rename onto a file that already exists
     ├── UnreadableFileError      not UTF-8 text, or larger than the read cap
     │    └── NotRegularFileError a FIFO, device or directory where a file is read (also OSError)
     ├── InvalidTextError         text to write is not valid Unicode (a lone surrogate)
     ├── ConflictError            expected-hash write, but the file changed underneath
     ├── EditError                exact-string edit: old text missing or not unique
     ├── LockHeldError            a lock file is held by someone else (timeout elapsed)
     ├── DreamError               a dream / daily-log request that cannot run (empty log text...)
     ├── SecretFoundError         content bound for shared memory holds credentials (labels only)
     │    └── PrivateSecretError  the same in private memory, with ``privateSecrets: refuse``
     ├── ToolDenied               a sandbox policy refused a tool call (told to the model)
     ├── ProviderError            an LLM provider failed (network, auth, refusal, bad output)
     │    ├── ProviderConfigError missing key / unknown model spec / missing extra
     │    ├── ProviderUnavailableError transient: 429, 5xx, overload, timeout, connection (retried)
     │    ├── HostModelUnavailableError the host agent's CLI is missing, logged out, failing or
     │    │    │                      slow: not retried, the caller falls back offline
     │    │    └── BudgetExhaustedError today's host-model budget is spent (offline until tomorrow)
     │    └── InvalidOutputError  the model's output did not parse or did not match the schema
     ├── MissingExtraError        an optional dependency is not installed (names the extra)
     ├── SyncError                team sync failures
 │    ├── SyncAuthError       401/403: no or bad token (permanent)
 │    ├── SyncConflictError   412 retries exhausted
 │    └── SyncRejectedError   any other 4xx (no such repo, too many entries, bad key; .status)
 ├── HookInputError           a host hook sent JSON memdir cannot use (bad shape, unsafe id)
 ├── ShutdownError            the process is exiting: background native work stops here
 ├── DaemonError              the recall daemon is absent, stale or answered badly (fall back)
 │    └── DaemonTimeoutError  it took the request but did not answer in time (it may still act)
 ├── InstallError             a host config file cannot be merged (not a JSON object, ...)
 ├── BundleError              an export bundle that cannot be restored safely (hostile, corrupt,
 │                            a newer format) or an instructions section memdir cannot place
 ├── ImportSourceError        ``memdir import`` cannot read its source (another schema, a newer
 │                            version, JSON nested too deep): nothing was written
 └── CsrfError                a `memdir ui` form without this start's token (cross-site request)

The value of a secret is never put in any exception message.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence

TYPE_CHECKING = False  # pathlib is imported where a path is kept: the hook fast path imports this
if TYPE_CHECKING:
    from pathlib import Path


class MemdirError(Exception):
    """Root of every error memdir raises."""


class ConfigError(MemdirError):
    """A setting, environment variable or override is invalid."""


class UnsafePathError(MemdirError):
    """A path would escape the directory it must stay in, or is malformed."""


class PathTraversalError(UnsafePathError):
    """A team-memory key or write path failed the hardened team checks."""


class ReservedPathError(UnsafePathError):
    """A hidden or control path (lock, temp, cache, .git, .env), or MEMORY.md as a memory."""


class FrontmatterError(MemdirError):
    """A memory file's frontmatter is malformed."""

    def __init__(self, message: str, *, path: Path | str | None = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        super().__init__(f"{where}{message}")
        self.reason = message
        from pathlib import Path

        self.path = Path(path) if path is not None else None
        self.line = line


class MemoryNotFoundError(MemdirError, FileNotFoundError):
    """The memory file does not exist."""


class MemoryExistsError(MemdirError, FileExistsError):
    """The target memory file already exists."""


class UnreadableFileError(MemdirError):
    """A file is binary (not UTF-8) or larger than memdir will read."""


class NotRegularFileError(UnreadableFileError, OSError):
    """A FIFO, socket, device or directory where memdir reads a file: refused without blocking.

    Also an ``OSError`` (like ``IsADirectoryError``), so a reader that treats I/O errors as
    "unreadable, skip it" treats this the same way without a second except clause.
    """

    def __init__(self, path: Path | str, detail: str = "is not a regular file") -> None:
        OSError.__init__(self, errno.EINVAL, detail, str(path))
        self.message = f"{path} {detail}; refusing to read it"

    def __str__(self) -> str:
        return self.message


class InvalidTextError(MemdirError, ValueError):
    """Text to write cannot be stored as UTF-8 (it holds a lone surrogate)."""


class ConflictError(MemdirError):
    """The file changed since the caller read it (expected hash mismatch)."""


class EditError(MemdirError):
    """An exact-string edit could not be applied (no match, or more than one)."""


class LockHeldError(MemdirError):
    """A lock is held by another holder and could not be taken in time."""


class DreamError(MemdirError):
    """A consolidation or daily-log request that cannot be carried out as asked."""


class SecretFoundError(MemdirError):
    """Content bound for shared (team) memory contains credentials.

    Carries only rule ids and labels; the secret value is never stored here.
    """

    def __init__(self, labels: Sequence[str], *, path: str | None = None):
        self.labels = list(labels)
        self.path = path
        where = f" in {path}" if path else ""
        super().__init__(
            f"refusing to write{where}: content contains potential secrets "
            f"({', '.join(self.labels)}); team memory is shared, remove them first"
        )


class PrivateSecretError(SecretFoundError):
    """Content bound for *private* memory holds credentials and the setting says refuse."""

    def __init__(self, labels: Sequence[str], *, path: str | None = None):
        super().__init__(labels, path=path)
        where = f" in {path}" if path else ""
        self.args = (
            f"refusing to write{where}: content contains potential secrets "
            f"({', '.join(self.labels)}); the privateSecrets setting is 'refuse'",
        )


class ToolDenied(MemdirError):
    """A sandbox policy refused a tool call."""


class ProviderError(MemdirError):
    """An LLM provider call failed."""


class ProviderConfigError(ProviderError, ConfigError):
    """The provider is misconfigured (missing API key, unknown model spec)."""


class ProviderUnavailableError(ProviderError):
    """A transient provider failure (rate limit, 5xx, overload, timeout, connection); retryable."""

    def __init__(self, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class HostModelUnavailableError(ProviderError):
    """The host agent's CLI cannot serve this call (missing, not logged in, failed, timed out).

    Not transient in the retry sense: the caller says so once and takes its offline path.
    """


class BudgetExhaustedError(HostModelUnavailableError):
    """Today's host-model budget (``hostModelBudgetUsd``) is spent; no call was made."""


class InvalidOutputError(ProviderError):
    """The model's output was not valid for the requested schema."""


class PromptTooLongError(ProviderError):
    """The request is longer than the model's context window; ``gap_tokens`` is by how much,
    when the provider says."""

    def __init__(self, message: str, *, gap_tokens: int | None = None):
        super().__init__(message)
        self.gap_tokens = gap_tokens


class CompactionError(MemdirError):
    """A compaction failed (no summary, provider failure, still too long after retries)."""


class MissingExtraError(MemdirError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str):
        super().__init__(
            f"{package} is not installed; install it with: pip install 'memdir[{extra}]'"
        )
        self.package = package
        self.extra = extra


class SyncError(MemdirError):
    """Team sync failed."""


class SyncAuthError(SyncError):
    """The sync server refused our credentials (permanent until reconfigured)."""


class SyncConflictError(SyncError):
    """The server's version kept moving; conflict retries are exhausted."""


class SyncRejectedError(SyncError):
    """The server refused the request for good (a 4xx other than 401/403/409/412/429)."""

    def __init__(self, message: str, *, status: int, code: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code


__all__ = [
    "BudgetExhaustedError",
    "CompactionError",
    "ConfigError",
    "ConflictError",
    "DreamError",
    "EditError",
    "FrontmatterError",
    "HostModelUnavailableError",
    "InvalidOutputError",
    "InvalidTextError",
    "LockHeldError",
    "MemdirError",
    "MemoryExistsError",
    "MemoryNotFoundError",
    "MissingExtraError",
    "NotRegularFileError",
    "PathTraversalError",
    "PrivateSecretError",
    "PromptTooLongError",
    "ProviderConfigError",
    "ProviderError",
    "ProviderUnavailableError",
    "ReservedPathError",
    "SecretFoundError",
    "SyncAuthError",
    "SyncConflictError",
    "SyncError",
    "SyncRejectedError",
    "ToolDenied",
    "UnreadableFileError",
    "UnsafePathError",
]


class HookInputError(MemdirError):
    """The JSON a host passed to ``memdir hook <event>`` is unusable."""


class ShutdownError(MemdirError):
    """The process is exiting: background native work (an index build) stops between batches
    instead of being cut through by the interpreter's exit."""


class DaemonError(MemdirError):
    """The recall daemon could not answer; callers fall back to in-process recall."""


class DaemonTimeoutError(DaemonError):
    """The daemon received the request but gave no answer in time: it may still be acting on
    it, so a caller with side effects must not simply run the request again."""


class InstallError(MemdirError):
    """A host's settings or MCP config file cannot be merged safely."""


class CsrfError(MemdirError):
    """A state-changing ``memdir ui`` request without this start's form token."""


class BundleError(MemdirError):
    """A bundle (``memdir export``) is corrupt, hostile or of a newer format; or an instructions
    file section (``memdir export agents-md``) cannot be placed safely. Nothing was written."""


class ImportSourceError(MemdirError):
    """An import source memdir cannot read safely; the import writes nothing."""
