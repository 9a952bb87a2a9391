"""The team sync client: pull (server wins per key) and push (local wins per key) over HTTP.

Invariants:

- Pull writes only keys that pass ``keys.validate_team_key`` inside the team dir, only through
  ``atomic_write``, and never rewrites a file whose content is already identical (mtimes stay).
- Push never writes the memory dir. It sends only entries whose SHA-256 differs from what the
  server last reported, in batches under the server's body limit, each PUT conditional on the
  last server checksum (``If-Match``), so a concurrent writer causes a 412 and a re-diff, never
  a silent overwrite of state we have not seen. Files holding secrets never leave the machine.
- Deletions do not propagate: a file deleted locally stays on the server (and comes back on the
  next full pull); the server has no delete operation.
- Transient failures (connection errors, timeouts, 5xx, 429) are retried with exponential
  backoff and jitter; everything else maps to a :class:`~memdir.errors.SyncError` subclass.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.atomic import atomic_write
from memdir.errors import (
    MemdirError,
    MissingExtraError,
    PathTraversalError,
    SyncAuthError,
    SyncConflictError,
    SyncError,
    SyncRejectedError,
)
from memdir.team import wire
from memdir.team.client_state import Skipped, SyncState, read_local
from memdir.team.keys import validate_team_key

try:
    import httpx
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingExtraError("httpx", "team") from exc

TRIES = 3
CONFLICT_RETRIES = 2
BASE_DELAY = 0.5
MAX_DELAY = 32.0
TIMEOUT = 30.0
WRITERS = 8
CONFLICT_JITTER = 0.25  # seconds, times the retry number, times a random fraction


def backoff_delay(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait after failed ``attempt`` (1-based): 0.5·2^(n-1), capped at 32, +≤25%."""
    base: float = min(BASE_DELAY * 2.0 ** (attempt - 1), MAX_DELAY)
    return base + base * 0.25 * rand()


@dataclass
class WireStats:
    requests: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0


@dataclass
class PullResult:
    status: str  # "not_modified" | "empty" | "updated"
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[Skipped] = field(default_factory=list)


@dataclass
class PushResult:
    uploaded: list[str] = field(default_factory=list)
    batches: int = 0
    conflicts: int = 0
    truncated: int = 0
    skipped: list[Skipped] = field(default_factory=list)


class TeamSyncClient:
    """Talks to one server about one repository for one team directory."""

    def __init__(
        self,
        *,
        url: str,
        token: str,
        repo: str,
        team_dir: Path,
        state_path: Path,
        http: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rand: Callable[[], float] = random.random,
        timeout: float = TIMEOUT,
    ):
        if not wire.valid_repo(repo):
            raise SyncError(f"invalid repository {repo!r}: expected owner/repo")
        self.url = url.rstrip("/") + wire.API_PATH
        self.repo = repo
        self.team_dir = team_dir
        self.state_path = state_path
        self.state = SyncState.load(state_path)
        self.stats = WireStats()
        self._token = token
        self._http = http if http is not None else httpx.AsyncClient(timeout=timeout)
        self._owns_http = http is None
        self._sleep = sleep
        self._rand = rand

    async def __aenter__(self) -> TeamSyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def pull(self) -> PullResult:
        """Fetch the repository and write every entry that differs locally."""
        headers = {}
        if self.state.pulled_checksum:
            headers["If-None-Match"] = wire.quote_etag(self.state.pulled_checksum)
        response = await self._request("GET", headers=headers)
        if response.status_code == 304:
            return PullResult(status="not_modified")
        if response.status_code == 404:
            self._repo_is_empty()
            return PullResult(status="empty")
        self._raise_for(response)
        document = _document(response)
        entries = document["content"].get("entries", {})
        # Disk work runs off the event loop (an agent hosting the watcher stays responsive);
        # a few writers in parallel overlap the fsyncs of the atomic writes.
        result = await asyncio.to_thread(self._apply, entries)
        self.state.server_checksums = _server_checksums(document)
        self.state.last_checksum = self.state.pulled_checksum = document["checksum"]
        version = document.get("version")
        self.state.pulled_version = version if isinstance(version, int) else None
        self.state.save(self.state_path)
        return result

    def _repo_is_empty(self) -> None:
        """The server has nothing for this repository: we hold all of it (version 0)."""
        self.state.last_checksum = self.state.pulled_checksum = None
        self.state.pulled_version = 0
        self.state.server_checksums = {}
        self.state.save(self.state_path)

    def _apply(self, entries: dict[str, str]) -> PullResult:
        result = PullResult(status="updated")
        keys = sorted(entries)
        with ThreadPoolExecutor(max_workers=WRITERS) as pool:
            outcomes = list(pool.map(lambda key: self._write_entry(key, entries[key]), keys))
        for key, outcome in zip(keys, outcomes, strict=True):
            if isinstance(outcome, Skipped):
                result.skipped.append(outcome)
            elif outcome:
                result.written.append(key)
            else:
                result.unchanged += 1
        return result

    def _write_entry(self, key: str, text: str) -> bool | Skipped:
        """Write one pulled entry: ``True`` written, ``False`` already identical, or why not.

        Never raises for one entry's sake: whatever a hostile key or value does to the file
        system calls, it becomes this entry's :class:`Skipped`, and the pull goes on.
        """
        try:
            path = validate_team_key(self.team_dir, key)
        except PathTraversalError:
            return Skipped(key, "unsafe key refused")
        problem = wire.text_problem(text)
        if problem is not None:
            return Skipped(key, f"content {problem}")
        if wire.entry_bytes(text) > wire.MAX_ENTRY_BYTES:
            return Skipped(key, f"larger than {wire.MAX_ENTRY_BYTES} bytes")
        try:
            if path.is_file() and path.read_bytes() == text.encode("utf-8"):
                return False
            atomic_write(path, text)
        except OSError as exc:
            return Skipped(key, f"cannot write ({exc.strerror or exc})")
        except MemdirError as exc:  # e.g. a path check deeper in the write refused it
            return Skipped(key, f"cannot write ({exc})")
        return True

    async def fetch_hashes(self) -> None:
        """Refresh the server checksums with a ``view=hashes`` probe (no content transferred)."""
        response = await self._request("GET", params={"view": "hashes"})
        if response.status_code == 404:
            self._repo_is_empty()
            return
        self._raise_for(response)
        document = _document(response)
        self.state.server_checksums = _server_checksums(document)
        self.state.last_checksum = document["checksum"]
        self.state.save(self.state_path)

    async def push(self) -> PushResult:
        """Upload local entries the server does not have; local wins per key."""
        local = await asyncio.to_thread(read_local, self.team_dir)
        result = PushResult(skipped=local.skipped)
        if self.state.last_checksum is None and self.state.pulled_version is None:
            # Never synced: learn what the server holds so unchanged entries are not re-sent
            # and the first PUT is conditional like every other.
            await self.fetch_hashes()
        keys = sorted(local.entries)
        limit = self.state.server_max_entries
        if limit is not None and len(keys) > limit:
            result.truncated = len(keys) - limit
            keys = keys[:limit]
        for attempt in range(CONFLICT_RETRIES + 1):
            delta = {
                k: local.entries[k]
                for k in keys
                if self.state.server_checksums.get(k) != wire.checksum(local.entries[k])
            }
            if await self._put_batches(delta, result):
                return result
            result.conflicts += 1
            if attempt == CONFLICT_RETRIES:
                break
            # Writers that collided would collide again if they all retried at once.
            await self._sleep(CONFLICT_JITTER * (attempt + 1) * self._rand())
            await self.fetch_hashes()
        raise SyncConflictError(
            f"team memory for {self.repo} kept changing; gave up after "
            f"{CONFLICT_RETRIES} conflict retries"
        )

    async def _put_batches(self, delta: dict[str, str], result: PushResult) -> bool:
        """Send ``delta`` batch by batch; ``False`` on a 412 (caller re-diffs and retries)."""
        for batch in wire.batch_entries(delta):
            headers = {"Content-Type": "application/json"}
            expected = self.state.last_checksum
            if expected:
                headers["If-Match"] = wire.quote_etag(expected)
            response = await self._request("PUT", headers=headers, content=wire.encode_put(batch))
            if response.status_code == 412:
                return False
            if response.status_code == 413:
                self._too_large(response)
            self._raise_for(response)
            document = _json(response)
            for key, text in batch.items():
                self.state.server_checksums[key] = wire.checksum(text)
            if isinstance(document, dict) and isinstance(document.get("checksum"), str):
                self._accepted(document)
            self.state.save(self.state_path)
            result.uploaded.extend(sorted(batch))
            result.batches += 1
        return True

    def _accepted(self, document: dict[str, Any]) -> None:
        self.state.last_checksum = document["checksum"]
        version = document.get("version")
        pulled = self.state.pulled_version
        if isinstance(version, int) and pulled is not None and version == pulled + 1:
            # Ours was the only write since the state we hold, so we still hold all of it.
            self.state.pulled_checksum = document["checksum"]
            self.state.pulled_version = version
        else:
            self.state.pulled_version = None  # someone else wrote too: the next pull fetches

    def _too_large(self, response: httpx.Response) -> None:
        details = wire.error_details(_json(response))
        if details.get("error_code") == wire.TOO_MANY_ENTRIES:
            max_entries = details.get("max_entries")
            if isinstance(max_entries, int):
                self.state.server_max_entries = max_entries
                self.state.save(self.state_path)
            raise SyncRejectedError(
                f"the server holds at most {max_entries} entries for {self.repo} "
                f"(this push would make {details.get('received_entries')}); "
                "the next push sends only the first entries in path order",
                status=413,
                code=wire.TOO_MANY_ENTRIES,
            )

    async def _request(
        self,
        method: str,
        *,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
        content: bytes | None = None,
    ) -> httpx.Response:
        all_headers = {"Authorization": f"Bearer {self._token}", **(headers or {})}
        all_params = {"repo": self.repo, **(params or {})}
        problem = ""
        for attempt in range(1, TRIES + 1):
            try:
                response = await self._http.request(
                    method, self.url, params=all_params, headers=all_headers, content=content
                )
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                self.stats.requests += 1
                self.stats.bytes_sent += len(content or b"")
                self.stats.bytes_received += len(response.content)
                if response.status_code < 500 and response.status_code != 429:
                    return response
                problem = f"HTTP {response.status_code}"
            if attempt < TRIES:
                await self._sleep(backoff_delay(attempt, self._rand))
        raise SyncError(f"team sync server unavailable after {TRIES} tries ({problem})")

    def _raise_for(self, response: httpx.Response) -> None:
        status = response.status_code
        if status < 400:
            return
        details = wire.error_details(_json(response))
        code = details.get("error_code")
        if status in (401, 403):
            raise SyncAuthError(
                f"team sync server refused the token for {self.repo} (HTTP {status}); "
                "check MEMDIR_TEAM_TOKEN"
            )
        if status == 404:
            raise SyncRejectedError(f"no team memory endpoint for {self.repo}", status=404)
        raise SyncRejectedError(
            f"team sync server rejected the request (HTTP {status}"
            + (f", {code}" if code else "")
            + ")",
            status=status,
            code=code if isinstance(code, str) else None,
        )


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _document(response: httpx.Response) -> dict[str, Any]:
    """The GET body, checked for the shape we rely on; a malformed body is a SyncError."""
    body = _json(response)
    content = body.get("content") if isinstance(body, dict) else None
    if not isinstance(body, dict) or not isinstance(body.get("checksum"), str):
        raise SyncError("team sync server sent a malformed document (no checksum)")
    if not isinstance(content, dict):
        raise SyncError("team sync server sent a malformed document (no content)")
    for name in ("entries", "entryChecksums"):
        value = content.get(name, {})
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise SyncError(f"team sync server sent a malformed document ({name})")
    return body


def _server_checksums(document: dict[str, Any]) -> dict[str, str]:
    content = document["content"]
    sums: dict[str, str] = dict(content.get("entryChecksums", {}))
    for key, text in content.get("entries", {}).items():
        if key not in sums and wire.text_problem(text) is None:
            sums[key] = wire.checksum(text)
    # Only keys a client could hold: the state file stays writable whatever the server sent.
    return {k: v for k, v in sums.items() if _storable(k) and _storable(v)}


def _storable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
