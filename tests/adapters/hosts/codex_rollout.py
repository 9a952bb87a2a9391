"""A small Codex rollout writer: the line shapes of ``tests/fixtures/hosts/codex`` (recorded from
Codex 0.171), for tests that need a session of their own."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STAMP = "2026-01-01T00:00:00.000Z"


@dataclass
class Rollout:
    """``$CODEX_HOME/sessions/2026/01/01/rollout-…-<id>.jsonl``, appended line by line."""

    codex_home: Path
    session_id: str
    ordinal: int = 0
    path: Path = field(init=False)

    def __post_init__(self) -> None:
        day = self.codex_home / "sessions" / "2026" / "01" / "01"
        day.mkdir(parents=True, exist_ok=True)
        self.path = day / f"rollout-2026-01-01T00-00-00-{self.session_id}.jsonl"
        self.line("session_meta", {"id": self.session_id, "cwd": "/work/project"})

    def line(self, kind: str, payload: dict[str, Any], **top: Any) -> None:
        row = {"timestamp": STAMP, "ordinal": self.ordinal, "type": kind, "payload": payload, **top}
        self.ordinal += 1
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    def message(self, role: str, text: str, kinds: list[str], **top: Any) -> None:
        part = "output_text" if role == "assistant" else "input_text"
        meta = {"turn_id": "t", "content_item_kinds": kinds}
        payload = {
            "type": "message",
            "id": f"msg_{self.ordinal}",
            "role": role,
            "content": [{"type": part, "text": text}],
            "internal_chat_message_metadata_passthrough": meta,
        }
        self.line("response_item", payload, metadata={"history_sequence": self.ordinal, **top})

    def turn(self, prompt: str, answer: str, *, hook_context: str = "") -> None:
        """One turn as Codex writes it: its environment text, hook context, the prompt, the
        duplicate event_msg, the answer."""
        self.message("user", "<environment_context>\n  <cwd>/work/project</cwd>", ["x.y"])
        if hook_context:
            self.message("developer", hook_context, ["hooks.additional_context"])
        self.message("user", prompt, ["user.text"])
        item = {"type": "UserMessage", "content": [{"type": "text", "text": prompt}]}
        self.line("event_msg", {"type": "item_completed", "item": item})
        self.message("assistant", answer, ["unknown"])

    def tool_call(self, namespace: str | None, name: str, args: dict[str, Any], out: str) -> None:
        call: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{self.ordinal}",
            "name": name,
            "arguments": json.dumps(args),
            "call_id": f"call_{self.ordinal}",
        }
        if namespace:
            call["namespace"] = namespace
        self.line("response_item", call)
        output = [{"type": "input_text", "text": "Wall time: 0.01 seconds\nOutput:"}]
        output.append({"type": "input_text", "text": out})
        result = {"type": "function_call_output", "call_id": call["call_id"], "output": output}
        self.line("response_item", result)

    def raw(self, data: bytes) -> None:
        with self.path.open("ab") as fh:
            fh.write(data)
