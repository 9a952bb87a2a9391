"""The SDK plugin ``memdir install cline`` writes (Cline CLI 3.0's plugin hooks).

Cline's file hooks (``.clinerules/hooks/``) cannot add context in 3.0 (``UserPromptSubmit`` never
fires headless; ``TaskStart`` runs detached and its output is ignored). An SDK plugin can: its
``beforeRun`` hook returns ``{appendContext}``, which Cline appends after the run's input as a
``<hook_context source="RunStart">`` user message, kept in the session. So memdir writes one
plugin that forwards, per run of a conversation:

- ``beforeRun``: the conversation's messages to memdir's session file, then (the first run of a
  conversation in this process) ``session-start`` and, always, ``user-prompt-submit`` with the
  user's words; both answers go back as one ``appendContext``;
- ``afterRun``: the messages again (the run's reply and tool calls in them), then ``stop``.

Cline tells a plugin nothing at a compaction or at the end of a session: those events do not
reach memdir from Cline. Invariant: no hook throws or waits without a bound; every failure is
"nothing added" and Cline goes on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from memdir.adapters.hosts.opencode_plugin import RUN_MEMDIR, TELL_MEMDIR, split_command

MARKER = "// memdir: written by `memdir install cline`; `memdir uninstall cline` removes it"

_TEMPLATE = """\
__MARKER__
// Cline SDK plugin: memories with each run's prompt, extraction after each run.
const { spawn } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")

const COMMAND = __COMMAND__
const EXTRA_ENV = __EXTRA_ENV__
const EVENT_NAMES = __EVENTS__
const TRANSCRIPTS = __TRANSCRIPTS__
const TIMEOUT_MS = { "session-start": 10000, "user-prompt-submit": 10000, stop: 10000 }
const MAX_ANSWER = 8 * 1024 * 1024
const started = new Set()

__RUN_MEMDIR__

__TELL_MEMDIR__

function sessionFile(id) {
  return path.join(TRANSCRIPTS, String(id).replace(/[^A-Za-z0-9_.-]/g, "_") + ".json")
}

function save(id, messages) {
  const file = sessionFile(id)
  try {
    fs.mkdirSync(TRANSCRIPTS, { recursive: true, mode: 0o700 })
    const tmp = `${file}.${process.pid}.tmp`
    fs.writeFileSync(tmp, JSON.stringify({ messages: messages || [] }), { mode: 0o600 })
    fs.renameSync(tmp, file)
    return file
  } catch {
    return null
  }
}

function promptOf(messages) {
  for (let i = (messages || []).length - 1; i >= 0; i--) {
    const m = messages[i]
    if (!m || m.role !== "user" || !Array.isArray(m.content)) continue
    const text = m.content
      .filter((p) => p && p.type === "text" && typeof p.text === "string")
      .map((p) => p.text)
      .join("\\n")
    if (text && !text.startsWith("<hook_context")) return text
  }
  return ""
}

function bodyOf(event, id, file, extra) {
  return JSON.stringify({
    session_id: String(id),
    transcript_path: file,
    cwd: process.cwd(),
    hook_event_name: EVENT_NAMES[event],
    ...extra,
  })
}

async function send(event, id, file, extra) {
  const env = { ...process.env, ...EXTRA_ENV }
  const args = ["hook", "--host", "cline", event]
  const body = bodyOf(event, id, file, extra)
  const out = await runMemdir(args, body, TIMEOUT_MS[event], env, process.cwd())
  try {
    const text = JSON.parse(out).additionalContext
    return typeof text === "string" ? text : ""
  } catch {
    return ""
  }
}

module.exports = {
  name: "memdir",
  manifest: { capabilities: ["hooks"] },
  hooks: {
    beforeRun: async (ctx) => {
      try {
        const snap = ctx && ctx.snapshot
        const id = snap && snap.conversationId
        if (!id) return undefined
        const messages = snap.messages || []
        const file = save(id, messages)
        const asks = []
        if (!started.has(id)) {  // the session start and the prompt's recall, side by side
          started.add(id)
          const source = messages.length > 1 ? "resume" : "startup"
          asks.push(send("session-start", id, file, { source }))
        }
        asks.push(send("user-prompt-submit", id, file, { prompt: promptOf(messages) }))
        const text = (await Promise.all(asks)).filter(Boolean).join("\\n\\n")
        if (text) return { appendContext: text }
      } catch {}
      return undefined
    },
    afterRun: async (ctx) => {
      try {
        const snap = ctx && ctx.snapshot
        const id = snap && snap.conversationId
        if (!id) return
        const messages = (ctx.result && ctx.result.messages) || snap.messages || []
        const body = bodyOf("stop", id, save(id, messages), {})
        // handed over, not waited for: the extraction runs in memdir's own detached worker
        const env = { ...process.env, ...EXTRA_ENV }
        await tellMemdir(["hook", "--host", "cline", "stop"], body, env, process.cwd())
      } catch {}
    },
  },
}
"""


def render_plugin(command: Sequence[str], events: Mapping[str, str], transcripts: Path) -> str:
    """The plugin file for an install whose hooks run ``command``; ``transcripts`` is where it
    writes each conversation's messages for memdir to read."""
    argv, extra, _flags = split_command(command)
    return (
        _TEMPLATE.replace("__MARKER__", MARKER)
        .replace("__RUN_MEMDIR__", RUN_MEMDIR.rstrip("\n"))
        .replace("__TELL_MEMDIR__", TELL_MEMDIR.rstrip("\n"))
        .replace("__COMMAND__", json.dumps(argv))
        .replace("__EXTRA_ENV__", json.dumps(extra, sort_keys=True))
        .replace("__EVENTS__", json.dumps(dict(events)))
        .replace("__TRANSCRIPTS__", json.dumps(str(transcripts)))
    )


__all__ = ["MARKER", "render_plugin"]
