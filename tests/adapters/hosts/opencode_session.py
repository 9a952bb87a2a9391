"""A session file in the shape memdir's OpenCode plugin writes: ``{"sessionID", "messages":
[{info, parts}]}``, as ``client.session.messages`` returns them in OpenCode 1.18 (the shape the
real-host suite reads back from the real CLI)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class OpenCodeSession:
    root: Path  # the plugin's transcript dir
    session_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.root / f"{self.session_id}.json"

    def _message(self, role: str, parts: list[dict[str, Any]], **info: Any) -> None:
        n = len(self.messages)
        ident = f"msg_{n:04d}{self.session_id[-6:]}"
        created = int(time.time() * 1000) + n
        self.messages.append(
            {
                "info": {"id": ident, "sessionID": self.session_id, "role": role,
                         "time": {"created": created}, **info},
                "parts": [
                    {"id": f"prt_{n:04d}_{k}", "messageID": ident, "sessionID": self.session_id,
                     **part}
                    for k, part in enumerate(parts)
                ],
            }
        )  # fmt: skip

    def turn(self, user: str, reply: str, *, recall: str | None = None) -> None:
        """The user's message (with memdir's synthetic recall part, if any) and the reply."""
        parts: list[dict[str, Any]] = [{"type": "text", "text": user}]
        if recall:
            parts.append({"type": "text", "text": recall, "synthetic": True})
        self._message("user", parts)
        self._message(
            "assistant",
            [{"type": "step-start"}, {"type": "text", "text": reply}, {"type": "step-finish"}],
        )
        self.write()

    def tool_turn(self, user: str, tool: str, args: dict[str, Any], output: str) -> None:
        self._message("user", [{"type": "text", "text": user}])
        state = {"status": "completed", "input": args, "output": output}
        self._message("assistant", [{"type": "tool", "tool": tool, "callID": "call_1",
                                     "state": state}])  # fmt: skip
        self.write()

    def compaction(self, summary: str) -> None:
        self._message("user", [{"type": "compaction", "auto": True}])
        self._message("assistant", [{"type": "text", "text": summary}], summary=True)
        self.write()

    def write(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        data = {"sessionID": self.session_id, "messages": self.messages}
        self.path.write_text(json.dumps(data))
