"""The JavaScript plugin ``memdir install opencode`` writes (OpenCode's v1 plugin API, 1.18).

The plugin is a thin forwarder: every event becomes memdir's hook JSON, sent to the warm recall
daemon over its Unix socket (the ``hook`` op the Python fast path uses, with the fingerprint of
the installed memdir build), or — no daemon yet, a stale one, a socket error — handed to
``memdir hook --host opencode <event>`` as a process. The socket, fingerprint and session dir
are written into the file at install (:func:`render_plugin`'s ``info``), so OpenCode's start
runs no memdir process; only when they are missing, stale (another build answers) or name a
socket that is not there does the plugin ask ``memdir hook --host opencode plugin-info``.
Nothing memdir decides lives here: what to recall, when to extract, the never-twice set are
the core's.

Invariant: no hook of this plugin ever throws or waits without a bound. Every failure (memdir not
on PATH, a daemon down, a garbled answer) ends as "nothing added", so OpenCode goes on as if
memdir were not installed.

The text is generated (:func:`render_plugin`) with the install's command and global flags in
it, and removed byte-exactly by ``memdir uninstall opencode`` (the install records its digest).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

MARKER = "// memdir: written by `memdir install opencode`; `memdir uninstall opencode` removes it"
_GLOBAL_FLAGS = ("--dir", "--settings", "--claude")

# memdir as a process, bounded: "" for any failure (shared by the JavaScript memdir writes)
RUN_MEMDIR = """\
function runMemdir(args, input, timeoutMs, env, cwd) {
  return new Promise((resolve) => {
    let out = ""
    let done = false
    const finish = (value) => {
      if (!done) {
        done = true
        resolve(value)
      }
    }
    let child
    try {
      child = spawn(COMMAND[0], [...COMMAND.slice(1), ...args], {
        cwd,
        env,
        stdio: ["pipe", "pipe", "ignore"],
      })
    } catch {
      return finish("")
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      finish("")
    }, timeoutMs)
    child.on("error", () => {
      clearTimeout(timer)
      finish("")
    })
    child.stdout.on("data", (chunk) => {
      if (out.length < MAX_ANSWER) out += chunk
    })
    child.on("close", () => {
      clearTimeout(timer)
      finish(out)
    })
    child.stdin.on("error", () => {})
    child.stdin.end(input)
  })
}
"""

# memdir as a process that nobody waits for (the turn's end, the session's end): the event is
# handed over once memdir's stdin has it, and the host goes on while memdir works
TELL_MEMDIR = """\
function tellMemdir(args, input, env, cwd) {
  return new Promise((resolve) => {
    let child
    try {
      child = spawn(COMMAND[0], [...COMMAND.slice(1), ...args], {
        cwd,
        env,
        stdio: ["pipe", "ignore", "ignore"],
      })
    } catch {
      return resolve()
    }
    const timer = setTimeout(resolve, 2000)
    child.on("error", () => {
      clearTimeout(timer)
      resolve()
    })
    child.stdin.on("error", () => {})
    child.stdin.end(input, () => {
      clearTimeout(timer)
      child.unref()
      resolve()
    })
  })
}
"""

_TEMPLATE = """\
__MARKER__
// OpenCode plugin (v1 API): recall on each user message, session notes at compaction,
// extraction when the session goes idle. It forwards events to memdir's hook core.
import { spawn } from "node:child_process"
import fs from "node:fs"
import net from "node:net"
import path from "node:path"

const COMMAND = __COMMAND__
const INSTALLED = __INFO__
const EXTRA_ENV = __EXTRA_ENV__
const FLAGS = __FLAGS__
const EVENT_NAMES = __EVENTS__
const TIMEOUT_MS = {
  "session-start": 10000,
  "user-prompt-submit": 5000,
  stop: 10000,
  "pre-compact": 50000,
  "session-end": 50000,
}
const MAX_ANSWER = 8 * 1024 * 1024

__RUN_MEMDIR__

function askDaemon(socket, payload, timeoutMs) {
  // {answer} from the daemon, {timeout: true} once it took the event, or {failed: true}
  return new Promise((resolve) => {
    let data = ""
    let sent = false
    let done = false
    const finish = (value) => {
      if (!done) {
        done = true
        conn.destroy()
        resolve(value)
      }
    }
    const conn = net.createConnection(socket)
    conn.setEncoding("utf8")
    const timer = setTimeout(() => finish(sent ? { timeout: true } : { failed: true }), timeoutMs)
    const settle = () => {
      clearTimeout(timer)
      try {
        finish({ answer: JSON.parse(data) })
      } catch {
        finish(sent ? { timeout: true } : { failed: true })
      }
    }
    // one request line, one answer line: no half-close (Bun's end() closes both ways)
    conn.on("connect", () => {
      conn.write(JSON.stringify({ v: 1, ...payload }) + "\\n")
      sent = true
    })
    conn.on("data", (chunk) => {
      data += chunk
      if (data.length > MAX_ANSWER) finish({ failed: true })
      else if (data.endsWith("\\n")) settle()
    })
    conn.on("error", () => {
      clearTimeout(timer)
      finish(sent ? { timeout: true } : { failed: true })
    })
    conn.on("end", settle)
  })
}

// memdir's rule for a session id (it names a file): a plain token, never a path
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/
const safeId = (id) => typeof id === "string" && SAFE_ID.test(id) && !id.includes("..")

function contextOf(stdout) {
  try {
    const value = JSON.parse(stdout)
    return typeof value.context === "string" ? value.context : ""
  } catch {
    return ""
  }
}

export const MemdirPlugin = async ({ client, directory }) => {
  const env = { ...process.env, ...EXTRA_ENV }
  const cwd = directory || process.cwd()
  const sessions = new Map()
  const usable = (value) =>
    !!value && typeof value.socket === "string" && typeof value.fingerprint === "string"
  let info = usable(INSTALLED) ? INSTALLED : null
  let infoAsked = null
  let askedOnce = false

  const askInfo = () => {
    askedOnce = true
    infoAsked = runMemdir(["hook", "--host", "opencode", "plugin-info"], "", 20000, env, cwd).then(
      (out) => {
        try {
          const value = JSON.parse(out)
          if (usable(value)) info = value
        } catch {}
      },
    )
    return infoAsked
  }
  if (!info) askInfo()

  const forward = async (event, body) => {
    // the hook's stdout ('' for nothing), through the daemon when it is there
    const parent = sessions.has(body.session_id) ? sessions.get(body.session_id).parent : null
    const agent = parent ? { agent_id: parent } : {} // memdir never extracts a sub-agent's turn
    const stdin = JSON.stringify({ hook_event_name: EVENT_NAMES[event], cwd, ...agent, ...body })
    const timeoutMs = TIMEOUT_MS[event]
    // the install's socket is a guess for this process's environment: check it once
    if (info && !askedOnce && !fs.existsSync(info.socket)) await askInfo()
    if (info && fs.existsSync(info.socket)) {
      const fingerprint = info.fingerprint
      const payload = { op: "hook", fingerprint, event, stdin, cwd, env, flags: FLAGS }
      const reply = await askDaemon(info.socket, payload, timeoutMs)
      if (reply.timeout && event !== "user-prompt-submit") return "" // it is still working on it
      const answer = reply.answer
      if (answer && answer.ok && typeof answer.stdout === "string") return answer.stdout
      if (answer && answer.stale) askInfo() // another memdir build: ask this one's again
    }
    return runMemdir(["hook", "--host", "opencode", event], stdin, timeoutMs + 5000, env, cwd)
  }

  const session = (id) => {
    let state = sessions.get(id)
    if (!state) {
      state = { start: null, delivered: false, stopping: false, parent: null }
      sessions.set(id, state)
    }
    return state
  }

  const saveTranscript = async (id) => {
    // the session's messages, as OpenCode's own API gives them, for memdir's reader
    if (!info || typeof info.transcripts !== "string" || !safeId(id)) return null
    try {
      const reply = await client.session.messages({ path: { id } })
      const messages = reply && Array.isArray(reply.data) ? reply.data : null
      if (!messages) return null
      fs.mkdirSync(info.transcripts, { recursive: true, mode: 0o700 })
      const file = path.join(info.transcripts, id + ".json")
      const tmp = file + "." + process.pid + ".tmp"
      fs.writeFileSync(tmp, JSON.stringify({ sessionID: id, messages }), { mode: 0o600 })
      fs.renameSync(tmp, file)
      return file
    } catch {
      return null
    }
  }

  const start = (id, source) => {
    const state = session(id)
    if (!state.start) {
      state.start = (async () => {
        if (infoAsked) await infoAsked
        return contextOf(await forward("session-start", { session_id: id, source }))
      })().catch(() => "")
    }
    return state.start
  }

  return {
    event: async ({ event }) => {
      try {
        const id = event && event.properties && event.properties.sessionID
        if (typeof id !== "string") return
        if (event.type === "session.created") {
          const parent = event.properties.info && event.properties.info.parentID
          if (typeof parent === "string") session(id).parent = parent // a sub-agent's session
          start(id, "startup")
        } else if (event.type === "session.idle") {
          const state = session(id)
          if (state.stopping) return // OpenCode 1.18 can announce one idle twice
          state.stopping = true
          try {
            const transcript = await saveTranscript(id)
            await forward("stop", { session_id: id, transcript_path: transcript })
          } finally {
            state.stopping = false
          }
        } else if (event.type === "session.deleted") {
          await forward("session-end", { session_id: id, reason: "deleted" })
          sessions.delete(id)
        }
      } catch {}
    },
    "chat.message": async (input, output) => {
      try {
        const id = input && input.sessionID
        if (typeof id !== "string" || !output || !Array.isArray(output.parts)) return
        const state = session(id)
        const typed = (p) => p && p.type === "text" && !p.synthetic && !p.ignored
        const texts = output.parts.filter(typed)
        const prompt = texts.map((p) => p.text).join("\\n")
        const blocks = []
        if (!state.delivered) {
          state.delivered = true
          blocks.push(await start(id, "resume"))
        }
        // after a compaction memdir itself puts the instructions, MEMORY.md and the notes back
        // with this prompt: it counts compactions in the session file (any process, resumed too)
        const dir = info && info.transcripts
        const transcript = dir && safeId(id) ? path.join(dir, id + ".json") : null
        const body = { session_id: id, prompt }
        if (transcript && fs.existsSync(transcript)) body.transcript_path = transcript
        blocks.push(contextOf(await forward("user-prompt-submit", body)))
        const text = blocks.filter((b) => b).join("\\n\\n")
        if (!text) return
        const last = texts.length ? texts[texts.length - 1] : output.parts[output.parts.length - 1]
        const messageID = (output.message && output.message.id) || (last && last.messageID)
        if (!last || typeof last.id !== "string" || typeof messageID !== "string") return
        // OpenCode orders parts by id: memdir's goes right after the user's text
        const part = { id: last.id + "memdir", sessionID: id, messageID, type: "text", text }
        output.parts.push({ ...part, synthetic: true })
      } catch {}
    },
    "experimental.session.compacting": async (input, output) => {
      try {
        const id = input && input.sessionID
        if (typeof id !== "string") return
        const transcript = await saveTranscript(id)
        const body = { session_id: id, transcript_path: transcript, trigger: "auto" }
        const out = await forward("pre-compact", body)
        const text = contextOf(out)
        if (text && output && Array.isArray(output.context)) output.context.push(text)
      } catch {}
    },
  }
}
"""


def split_command(command: Sequence[str]) -> tuple[list[str], dict[str, str], dict[str, object]]:
    """(the program and its arguments, an ``env K=V`` prefix as variables, memdir's global
    flags as the fast path's flags object) of an install's hook command."""
    args = list(command)
    extra: dict[str, str] = {}
    if args and args[0] == "env":
        args.pop(0)
        while args and "=" in args[0] and not args[0].startswith("-"):
            key, _, value = args.pop(0).partition("=")
            extra[key] = value
    flags: dict[str, object] = {"dir": None, "settings": None, "claude": False, "host": "opencode"}
    at = next((n for n, a in enumerate(args) if a in _GLOBAL_FLAGS), len(args))
    program, rest = args[:at], args[at:]
    while rest:
        option = rest.pop(0)
        if option == "--claude":
            flags["claude"] = True
        elif rest:
            flags[option[2:]] = rest.pop(0)
    return [*program, *args[at:]], extra, flags


def render_plugin(
    command: Sequence[str], events: Mapping[str, str], info: Mapping[str, str] | None = None
) -> str:
    """The plugin file for an install whose hooks run ``command`` (``env K=V`` prefix and
    global flags included); ``events`` names each memdir event the way the dialect checks;
    ``info`` is what ``plugin-info`` would answer now (socket, fingerprint, transcripts)."""
    argv, extra, flags = split_command(command)
    return (
        _TEMPLATE.replace("__MARKER__", MARKER)
        .replace("__RUN_MEMDIR__", RUN_MEMDIR.rstrip("\n"))
        .replace("__COMMAND__", json.dumps(argv))
        .replace("__INFO__", json.dumps(dict(info) if info else None, sort_keys=True))
        .replace("__EXTRA_ENV__", json.dumps(extra, sort_keys=True))
        .replace("__FLAGS__", json.dumps(flags, sort_keys=True))
        .replace("__EVENTS__", json.dumps(dict(events)))
    )


__all__ = ["MARKER", "RUN_MEMDIR", "TELL_MEMDIR", "render_plugin", "split_command"]
