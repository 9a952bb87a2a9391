"""A fake Claude Code: runs ``memdir hook <event>`` as real processes with the host's JSON on
stdin, and writes the session transcript the way the host does (reference-facts §12), turn by
turn: tool_use/tool_result blocks, a sidechain, a compact boundary with its summary, a torn line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.adapters import recall_client
from memdir.adapters.hooks.state import SessionState, SessionStore
from memdir.atomic import FileLock
from memdir.errors import DaemonError, LockHeldError
from memdir.transcripts import (
    Transcript,
    append_entries,
    new_uuid,
    text_block,
    timestamp,
    tool_use_block,
)

MODEL = "claude-sonnet-4-5"
HOOK_EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}


@dataclass
class HookRun:
    code: int
    stdout: str
    stderr: str

    @property
    def answer(self) -> dict[str, Any] | None:
        return json.loads(self.stdout) if self.stdout.strip() else None

    @property
    def context(self) -> str:
        answer = self.answer or {}
        return str(answer.get("hookSpecificOutput", {}).get("additionalContext", ""))

    @property
    def system_message(self) -> str | None:
        return (self.answer or {}).get("systemMessage")


@dataclass
class FakeHost:
    """One user's machine: a HOME, a project, memdir on the hook command line."""

    root: Path
    env: dict[str, str] = field(default_factory=dict)
    argv: list[str] = field(default_factory=lambda: [sys.executable, "-m", "memdir"])
    host: str = "claude-code"  # whose hook JSON this fake speaks (``memdir hook --host``)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.home.mkdir(parents=True, exist_ok=True)
        (self.project / ".git").mkdir(parents=True, exist_ok=True)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "CLAUDE_"))}
        # a daemon a test forgets to stop still goes away on its own
        self.env = {
            **base,
            "HOME": str(self.home),
            "MEMDIR_DAEMON_IDLE": "60",
            "MEMDIR_HOST_MODEL": "off",  # never the developer's own `claude`; tests opt in
            # a prompt waits for a daemon still loading, so what it recalls is deterministic;
            # the default (answer at once, deliver later) has its own tests
            "MEMDIR_RECALL_COLD_WAIT": "60",
            "MEMDIR_PREPARE_RECALL": "0",  # no daemon from `memdir install`; tests opt in
            **self.env,
        }

    # -- hooks --------------------------------------------------------------------------------
    def run(self, event: str, payload: dict[str, Any] | bytes | str, **kw: Any) -> HookRun:
        data = payload if isinstance(payload, bytes | str) else json.dumps(payload)
        raw = data.encode() if isinstance(data, str) else data
        host = [] if self.host == "claude-code" else ["--host", self.host]
        proc = subprocess.run(
            [*self.argv, "hook", *host, event],
            input=raw,
            capture_output=True,
            cwd=self.project,
            **{"timeout": 120, "env": self.env, **kw},
        )
        return HookRun(proc.returncode, proc.stdout.decode(), proc.stderr.decode())

    def memdir(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.argv, *args],
            capture_output=True,
            text=True,
            cwd=self.project,
            env=self.env,
            timeout=120,
        )

    def session(self, session_id: str | None = None) -> FakeSession:
        return FakeSession(self, session_id or new_uuid())

    @property
    def memory_dir(self) -> Path:
        where = json.loads(self.memdir("--json", "where").stdout)
        return Path(where["paths"]["memory_dir"] if "paths" in where else where["memory_dir"])

    @property
    def cache_dir(self) -> Path:
        where = json.loads(self.memdir("--json", "where").stdout)
        return Path(where["paths"]["cache_dir"] if "paths" in where else where["cache_dir"])

    def stop_daemon(self, wait: float = 20.0) -> None:
        """Stop this host's recall daemon, also one spawned a moment ago and still starting."""
        sock = recall_client.socket_path(self.home / ".memdir")
        spawned = sock.with_name(sock.name + ".spawned").exists()
        deadline = time.monotonic() + (wait if spawned else 0.0)
        while True:
            try:
                recall_client.request(sock, {"op": "stop"}, timeout=2.0)
                break
            except DaemonError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.1)
        lock = sock.with_name(sock.name + ".lock")
        deadline = time.monotonic() + wait
        while spawned and time.monotonic() < deadline:  # until it has exited and let go
            try:
                with FileLock(lock, timeout=0):
                    return
            except LockHeldError:
                time.sleep(0.1)


@dataclass
class FakeSession:
    host: FakeHost
    session_id: str

    def __post_init__(self) -> None:
        path = self.host.root / "transcripts" / f"{self.session_id}.jsonl"
        self.transcript = Transcript(path, self.session_id, str(self.host.project), version="2.1.0")

    def payload(self, event: str, **extra: Any) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript.path),
            "cwd": str(self.host.project),
            "permission_mode": "default",
            "hook_event_name": HOOK_EVENTS[event],
            **extra,
        }

    def hook(self, event: str, **extra: Any) -> HookRun:
        return self.host.run(event, self.payload(event, **extra))

    def start(self, source: str = "startup") -> HookRun:
        return self.hook("session-start", source=source)

    def prompt(self, text: str) -> HookRun:
        """The user submits ``text``: the hook runs first, then the host records the turn."""
        run = self.hook("user-prompt-submit", prompt=text)
        self.transcript.user(text)
        return run

    def reply(self, text: str, *, read: Path | None = None) -> None:
        """The assistant answers, optionally after reading a file (tool_use + tool_result)."""
        if read is not None:
            use = tool_use_block("Read", {"file_path": str(read)})
            self.transcript.assistant([use], model=MODEL, stop_reason="tool_use")
            self.transcript.tool_result(use["id"], "1\tcontents of the file")
        self.transcript.assistant(text, model=MODEL)

    def sidechain(self, text: str) -> None:
        """A sub-agent's turn written inline (older hosts did): never extracted."""
        sub = Transcript(
            self.transcript.path,
            self.session_id,
            self.transcript.cwd,
            agent_id="a1b2c3",
            last_uuid=self.transcript.last_uuid,
        )
        sub.user(text)

    def stop(self) -> HookRun:
        return self.hook("stop", stop_hook_active=False, last_assistant_message="done")

    def compact(self, summary: str) -> None:
        """What the host appends when it compacts: a boundary, then the summary as a user turn."""
        boundary = {
            "parentUuid": None,
            "logicalParentUuid": self.transcript.last_uuid,
            "isSidechain": False,
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "compactMetadata": {"trigger": "auto", "preTokens": 150000},
            "uuid": new_uuid(),
            "timestamp": timestamp(),
            "sessionId": self.session_id,
        }
        append_entries(self.transcript.path, [boundary])
        self.transcript.last_uuid = boundary["uuid"]
        self.transcript.user([text_block(summary)], is_compact_summary=True)

    def torn_line(self) -> None:
        """A host killed mid-write leaves half a JSON line."""
        with open(self.transcript.path, "ab") as fh:
            fh.write(b'{"type":"user","message":{"role":"user","content":"half a li')

    # -- waiting on the background extraction ----------------------------------------------------
    def state(self) -> SessionState:
        return SessionStore(self.host.cache_dir).load(self.session_id)

    def last_main_uuid(self) -> str | None:
        last = None
        for line in self.transcript.path.read_bytes().splitlines():
            try:
                entry = json.loads(line)
            except (ValueError, RecursionError):  # torn or hostile lines are not messages
                continue
            if (
                entry.get("type") in ("user", "assistant")
                and not entry.get("isSidechain")
                and not entry.get("isCompactSummary")
            ):
                last = entry.get("uuid")
        return last

    def wait_ended(self, timeout: float = 60.0) -> dict[str, Any]:
        """The ``session-end-worker`` row: the work ``session-end`` handed to its worker, done."""
        deadline = time.monotonic() + timeout
        while True:
            log = json.loads(
                self.host.memdir(
                    "--json", "hook", "log", "--session", self.session_id, "--limit", "0"
                ).stdout
            )
            rows = [row for row in log if row["event"] == "session-end-worker"]
            if rows:
                return dict(rows[-1])
            if time.monotonic() > deadline:
                raise AssertionError(f"the session-end worker did not finish: {log}")
            time.sleep(0.1)

    def wait_extracted(self, timeout: float = 60.0) -> SessionState:
        """Until the extraction cursor reaches the transcript's last main-thread message."""
        target = self.last_main_uuid()
        deadline = time.monotonic() + timeout
        while True:
            state = self.state()
            if state.cursor == target and not state.extract_pending:
                return state
            if time.monotonic() > deadline:
                raise AssertionError(f"extraction did not catch up: {state}")
            time.sleep(0.1)


def assistant_blocks(text: str) -> list[dict[str, Any]]:
    return [text_block(text)]
