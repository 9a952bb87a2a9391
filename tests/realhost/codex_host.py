"""The real Codex CLI in a sandbox: own HOME and CODEX_HOME, a fake API, this checkout's memdir.

``CodexHost`` runs ``codex exec`` (and ``codex exec resume --last``, ``--json``) as a real process
with:
- ``HOME``, ``CODEX_HOME`` (``~/.codex``: config, hooks, sessions) and ``~/.memdir`` inside the
  test's tmp dir, and a project dir beside them;
- a ``config.toml`` whose model provider is a :class:`~tests.realhost.fake_openai.FakeOpenAI` on
  127.0.0.1 (Responses API, a dummy key in an env var), retries off, analytics / feedback /
  telemetry / update checks off and the ``plugins`` feature off (it alone syncs marketplaces from
  github.com and chatgpt.com at start-up);
- ``HTTPS_PROXY`` / ``HTTP_PROXY`` at the fake too, loopback exempt, so any request off the
  machine is logged in ``api.escapes`` and refused instead of sent;
- a ``memdir`` on ``PATH`` that runs *this checkout's* sources with the test interpreter.

The CLI is the pinned npm package that ``scripts/install-test-deps.sh`` installs into
``~/.cache/memdir-test/codex-<version>/`` (``MEMDIR_TEST_CODEX`` overrides the binary).
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.realhost.fake_openai import FakeOpenAI
from tests.realhost.host import SRC, MemdirUser

HERE = Path(__file__).resolve().parent
VERSION = (HERE / "codex.version").read_text().strip()
# Computed at import, before the autouse fixture points HOME at a scratch dir.
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
DEFAULT_CLI = _CACHE / "memdir-test" / f"codex-{VERSION}" / "node_modules" / ".bin" / "codex"
CLI_OVERRIDE = os.environ.get("MEMDIR_TEST_CODEX")
KEY_ENV = "MEMDIR_TEST_OPENAI_KEY"
DUMMY_KEY = "sk-memdir-test-dummy-key-not-real"
PROVIDER = "memdir_fake"
MODEL = "gpt-fake"

MISSING_CLI = (
    f"the Codex CLI {VERSION} is not installed at {DEFAULT_CLI}: "
    "run `bash scripts/install-test-deps.sh` (CI does), "
    "or set MEMDIR_TEST_CODEX to a codex binary"
)


def find_cli() -> Path | None:
    """The pinned CLI, or None when it is not installed."""
    cli = Path(CLI_OVERRIDE) if CLI_OVERRIDE else DEFAULT_CLI
    return cli if cli.is_file() and os.access(cli, os.X_OK) else None


def toml_str(value: str) -> str:
    """A TOML basic string (JSON's escapes are a subset TOML accepts)."""
    return json.dumps(value)


def hook_event_label(event: str) -> str:
    """``SessionStart`` -> ``session_start``: the event's spelling in hook keys and hashes."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def hook_trust_hash(
    event: str,
    command: str,
    *,
    timeout: int,
    matcher: str | None = None,
    is_async: bool = False,
    status_message: str | None = None,
) -> str:
    """The ``trusted_hash`` Codex 0.171 expects for one command hook (``currentHash`` in
    ``hooks/list``): sha256 of the compact, key-sorted JSON of the normalised identity
    ``{"event_name", "matcher"?, "hooks": [{"type", "command", "timeout", "async",
    "statusMessage"?}]}`` (absent fields omitted; ``timeout`` is the effective one: the
    configured value, else 600 s, SessionEnd 1 s). ``codex-rs/hooks/src/engine/discovery.rs``
    (``command_hook_hash``) and ``codex-rs/config/src/fingerprint.rs`` (``version_for_toml``)."""
    hook: dict[str, Any] = {
        "type": "command",
        "command": command,
        "timeout": timeout,
        "async": is_async,
    }
    if status_message is not None:
        hook["statusMessage"] = status_message
    identity: dict[str, Any] = {"event_name": hook_event_label(event), "hooks": [hook]}
    if matcher is not None:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def base_config(api: FakeOpenAI) -> str:
    """The user ``config.toml``: the fake provider, and nothing that reaches the network."""
    return f"""\
model = "{MODEL}"
model_provider = "{PROVIDER}"
check_for_update_on_startup = false
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.{PROVIDER}]
name = "memdir fake"
base_url = {toml_str(api.base_url)}
env_key = "{KEY_ENV}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 30000

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[features]
plugins = false
daemon_auto_start = false
"""


def wait_for_line(
    lines: queue.Queue[str], wanted: Any, what: str, timeout: float
) -> dict[str, Any]:
    """The first JSON line from ``lines`` for which ``wanted(message)`` holds."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            message = json.loads(lines.get(timeout=left))
        except queue.Empty:
            break
        if wanted(message):
            return dict(message)
    raise AssertionError(f"app-server sent no {what} in {timeout} s")


@dataclass
class CodexHost(MemdirUser):
    """One sandboxed user of the real CLI: home, CODEX_HOME, project dir, env; run sessions."""

    cli: Path
    api: FakeOpenAI
    root: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    timings: list[tuple[tuple[str, ...], float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.codex_home = self.root / "home" / ".codex"
        self.make_sandbox(self.root, self.codex_home)
        self.config_path.write_text(base_config(self.api))

    @property
    def config_path(self) -> Path:
        return self.codex_home / "config.toml"

    @property
    def env(self) -> dict[str, str]:
        proxy = self.api.proxy_url
        env = {
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
            KEY_ENV: DUMMY_KEY,
            **{k: proxy for k in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")},
            **{k.lower(): proxy for k in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")},
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "RUST_LOG": "error",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PYTHONPATH": str(SRC),
        }
        env.update(self.extra_env)
        return env

    def add_top_level(self, toml: str) -> None:
        """Root keys (``model_auto_compact_token_limit = 2000``): they must precede the tables."""
        self.config_path.write_text(toml.strip() + "\n" + self.config_path.read_text())

    def add_config(self, toml: str) -> None:
        """Append TOML (tables, or keys after a table header) to the user ``config.toml``."""
        with self.config_path.open("a") as f:
            f.write("\n" + toml.strip() + "\n")

    def add_mcp_server(
        self,
        name: str,
        command: str,
        args: list[str] | tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        startup_timeout_sec: float = 30,
        approval: str | None = None,
    ) -> None:
        """A ``[mcp_servers.<name>]`` stdio server in the user config. ``approval`` sets
        ``default_tools_approval_mode``: ``"approve"`` runs every tool unasked; the default
        (``"auto"``) runs only tools annotated ``readOnlyHint`` in ``exec`` and refuses the rest
        ("MCP tool call requires approval, but approval policy is never")."""
        lines = [
            f"[mcp_servers.{name}]",
            f"command = {toml_str(command)}",
            f"args = [{', '.join(toml_str(a) for a in args)}]",
            f"startup_timeout_sec = {startup_timeout_sec}",
        ]
        if approval:
            lines.append(f"default_tools_approval_mode = {toml_str(approval)}")
        if env:
            lines.append(
                "env = { "
                + ", ".join(f"{toml_str(k)} = {toml_str(v)}" for k, v in env.items())
                + " }"
            )
        self.add_config("\n".join(lines))

    def trust_project(self, path: Path | None = None) -> None:
        """Mark the project trusted, as the TUI's "Do you trust this folder?" answer records it."""
        target = (path or self.project).resolve()
        self.add_config(f'[projects.{toml_str(str(target))}]\ntrust_level = "trusted"')

    def write_hooks(self, hooks: dict[str, Any], where: Path | None = None) -> Path:
        """``hooks.json`` (``{"hooks": {Event: [matcher groups]}}``) in ``where`` (a ``.codex``
        dir; the user's ``CODEX_HOME`` by default)."""
        folder = where or self.codex_home
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "hooks.json"
        path.write_text(json.dumps({"hooks": hooks}, indent=2) + "\n")
        return path

    def app_server(
        self, *calls: tuple[str, dict[str, Any]], until: str | None = None, timeout: float = 30
    ) -> list[Any]:
        """Call ``codex app-server`` (JSON-RPC over stdio, one JSON object a line) and return each
        call's ``result``: the host's own view, e.g. ``("hooks/list", {"cwds": [...]})``.
        ``until`` keeps the connection open until a notification of that method arrives (work
        a call started, such as ``thread/compact/start`` -> ``turn/completed``)."""
        proc = subprocess.Popen(
            [str(self.cli), "app-server"],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        lines: queue.Queue[str] = queue.Queue()
        out = proc.stdout

        def pump() -> None:
            for line in out:
                lines.put(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()

        def call(id_: int, method: str, params: dict[str, Any]) -> Any:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"id": id_, "method": method, "params": params}) + "\n")
            proc.stdin.flush()
            message = wait_for_line(
                lines, lambda m: m.get("id") == id_ and "method" not in m, method, timeout
            )
            if "error" in message:
                raise AssertionError(f"app-server {method}: {message['error']}")
            return message["result"]

        try:
            call(0, "initialize", {"clientInfo": {"name": "memdir-tests", "version": "0"}})
            proc.stdin.write(json.dumps({"method": "initialized"}) + "\n")
            results = [call(n, method, params) for n, (method, params) in enumerate(calls, 1)]
            if until:
                wait_for_line(lines, lambda m: m.get("method") == until, until, timeout)
            return results
        finally:
            proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            reader.join(timeout=5)
            out.close()

    def hooks_list(self, cwd: Path | None = None) -> list[dict[str, Any]]:
        """Every hook Codex discovers for ``cwd`` (the project by default), with its ``key``,
        ``currentHash``, ``trustStatus`` (``untrusted`` / ``trusted`` / ``modified`` /
        ``managed``), ``enabled``, effective ``timeoutSec`` and ``sourcePath``."""
        target = str(cwd or self.project)
        (result,) = self.app_server(("hooks/list", {"cwds": [target]}))
        return [hook for entry in result["data"] for hook in entry["hooks"]]

    def trust_hooks(self, cwd: Path | None = None) -> list[str]:
        """Trust every discovered hook as the TUI's ``/hooks`` review does: one
        ``[hooks.state."<key>"] trusted_hash = "<currentHash>"`` table each in the user
        ``config.toml``. Returns the keys."""
        hooks = [h for h in self.hooks_list(cwd) if h["trustStatus"] != "trusted"]
        text = self.config_path.read_text()
        for hook in hooks:  # a modified hook: its old table goes (TOML has no duplicate keys)
            head = f"[hooks.state.{toml_str(hook['key'])}]\n"
            text = re.sub(re.escape(head) + r'trusted_hash = "[^"]*"\n?', "", text)
        self.config_path.write_text(text)
        for hook in hooks:
            self.add_config(
                f"[hooks.state.{toml_str(hook['key'])}]\n"
                f"trusted_hash = {toml_str(hook['currentHash'])}"
            )
        return [h["key"] for h in hooks]

    def codex(
        self,
        *args: str,
        input: str | None = None,
        timeout: float = 90,
        check: bool = True,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return self.run_cli(*args, input=input or "", timeout=timeout, check=check, cwd=cwd)

    def exec(
        self,
        prompt: str,
        *args: str,
        resume: bool = False,
        bypass_hook_trust: bool = False,
        timeout: float = 90,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """``codex exec PROMPT`` (``exec resume --last PROMPT`` when ``resume``), outside git."""
        head = ["exec", "resume", "--last"] if resume else ["exec"]
        flags = ["--skip-git-repo-check"]
        if bypass_hook_trust:
            flags.append("--dangerously-bypass-hook-trust")
        return self.codex(*head, *flags, *args, prompt, timeout=timeout, check=check)

    def exec_json(self, prompt: str, *args: str, **kw: Any) -> list[dict[str, Any]]:
        """One ``codex exec --json`` run: its parsed event lines."""
        proc = self.exec(prompt, "--json", *args, **kw)
        return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]

    def rollouts(self) -> list[Path]:
        """Saved sessions (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``), oldest first."""
        return sorted((self.codex_home / "sessions").glob("*/*/*/rollout-*.jsonl"))
