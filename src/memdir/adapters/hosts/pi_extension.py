"""The TypeScript extension ``memdir install pi`` writes (pi's extension API, 0.73).

pi runs no shell hooks: it loads extensions in-process. This one forwards each event as memdir's
hook JSON to ``memdir hook --host pi <event>`` and hands back what memdir answers; nothing memdir
decides lives here. What each pi event becomes:

- ``session_start`` -> ``session-start`` (``source`` "resume" when the session file already holds
  messages: pi says "startup" for ``pi -c`` too); it cannot inject, so memdir defers the blocks
  to the first prompt;
- ``before_agent_start`` -> ``user-prompt-submit``: its answer returns as a hidden custom message
  (``customType: "memdir"``), which pi stores in the session and sends after the prompt;
- ``agent_end`` -> ``stop``; ``session_before_compact`` -> ``pre-compact``;
  ``session_shutdown`` -> ``session-end``.

Invariant: no handler throws or waits without a bound; every failure (memdir not on PATH, a
broken memory dir, a garbled answer) is "nothing added" and pi goes on. The text is generated
with the install's command in it and removed byte-exactly by ``memdir uninstall pi``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from memdir.adapters.hosts.opencode_plugin import RUN_MEMDIR, TELL_MEMDIR, split_command

MARKER = "// memdir: written by `memdir install pi`; `memdir uninstall pi` removes it"

_TEMPLATE = """\
__MARKER__
// pi extension: memories with each prompt, extraction after each turn, session notes at
// compaction. It forwards pi's events to memdir's hook core.
import { spawn } from "node:child_process"

const COMMAND = __COMMAND__
const EXTRA_ENV = __EXTRA_ENV__
const EVENT_NAMES = __EVENTS__
const TIMEOUT_MS = {
  "session-start": 10000,
  "user-prompt-submit": 10000,
  stop: 10000,
  "pre-compact": 50000,
  "session-end": 10000,
}
const MAX_ANSWER = 8 * 1024 * 1024

__RUN_MEMDIR__

__TELL_MEMDIR__

function sessionOf(ctx) {
  try {
    const sm = ctx.sessionManager
    const file = sm.getSessionFile ? sm.getSessionFile() : undefined
    const id = sm.getSessionId ? sm.getSessionId() : undefined
    return {
      id: typeof id === "string" ? id : undefined,
      file: typeof file === "string" ? file : undefined,
    }
  } catch {
    return {}
  }
}

function hasMessages(ctx) {
  try {
    return ctx.sessionManager.getEntries().some((e) => e && e.type === "message")
  } catch {
    return false
  }
}

function bodyOf(event, ctx, extra) {
  const session = sessionOf(ctx)
  if (!session.id) return null
  return JSON.stringify({
    session_id: session.id,
    transcript_path: session.file ?? null,
    cwd: ctx.cwd,
    hook_event_name: EVENT_NAMES[event],
    ...extra,
  })
}

// the turn's end and the session's end: handed over, not waited for (memdir's work on them
// runs in its own detached worker anyway)
async function tell(event, ctx, extra) {
  const body = bodyOf(event, ctx, extra)
  const env = { ...process.env, ...EXTRA_ENV }
  if (body) await tellMemdir(["hook", "--host", "pi", event], body, env, ctx.cwd)
}

async function send(event, ctx, extra) {
  const body = bodyOf(event, ctx, extra)
  if (!body) return ""
  const env = { ...process.env, ...EXTRA_ENV }
  const args = ["hook", "--host", "pi", event]
  const out = await runMemdir(args, body, TIMEOUT_MS[event], env, ctx.cwd)
  try {
    const text = JSON.parse(out).additionalContext
    return typeof text === "string" ? text : ""
  } catch {
    return ""
  }
}

export default function (pi) {
  pi.on("session_start", async (_event, ctx) => {
    try {
      await send("session-start", ctx, { source: hasMessages(ctx) ? "resume" : "startup" })
    } catch {}
  })
  pi.on("before_agent_start", async (event, ctx) => {
    try {
      const prompt = typeof event.prompt === "string" ? event.prompt : ""
      const text = await send("user-prompt-submit", ctx, { prompt })
      if (text) return { message: { customType: "memdir", content: text, display: false } }
    } catch {}
    return undefined
  })
  pi.on("agent_end", async (_event, ctx) => {
    try {
      await tell("stop", ctx, {})
    } catch {}
  })
  pi.on("session_before_compact", async (_event, ctx) => {
    try {
      await send("pre-compact", ctx, { trigger: "auto" })
    } catch {}
    return undefined
  })
  pi.on("session_shutdown", async (event, ctx) => {
    try {
      await tell("session-end", ctx, { reason: String(event && event.reason) })
    } catch {}
  })
}
"""


def render_extension(command: Sequence[str], events: Mapping[str, str]) -> str:
    """The extension file for an install whose hooks run ``command`` (an ``env K=V`` prefix and
    memdir's global flags included); ``events`` names each event the way the dialect checks."""
    argv, extra, _flags = split_command(command)
    return (
        _TEMPLATE.replace("__MARKER__", MARKER)
        .replace("__RUN_MEMDIR__", RUN_MEMDIR.rstrip("\n"))
        .replace("__TELL_MEMDIR__", TELL_MEMDIR.rstrip("\n"))
        .replace("__COMMAND__", json.dumps(argv))
        .replace("__EXTRA_ENV__", json.dumps(extra, sort_keys=True))
        .replace("__EVENTS__", json.dumps(dict(events)))
    )


__all__ = ["MARKER", "render_extension"]
