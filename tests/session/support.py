"""A real-shaped coding session, written through :class:`memdir.transcripts.Transcript`.

It is shaped like a Claude Code transcript: typed user messages as strings, each assistant block
logged as its own entry sharing the reply's message id, one tool-result entry per call (with
``toolUseResult``), an ``isMeta`` reminder, a ``file-history-snapshot``-style unknown entry and
a sidechain entry that readers must skip.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from memdir.transcripts import Transcript, append_entries, tool_use_block

SID = "7b0f2f7e-5a54-4c1e-9a38-0c1d2e3f4a5b"


def _reply(t: Transcript, blocks: list[dict[str, Any]]) -> None:
    mid = f"msg_{uuid.uuid4().hex[:20]}"
    for block in blocks:
        stop = "tool_use" if block["type"] == "tool_use" else None
        t.assistant([block], model="claude-test", message_id=mid, stop_reason=stop)


def _tool(
    t: Transcript, name: str, tool_input: dict[str, Any], result: str, *, error: bool = False
) -> None:
    call = tool_use_block(name, tool_input)
    _reply(t, [call])
    t.tool_result(call["id"], result, is_error=error)


def coding_session(path: Path) -> Transcript:
    t = Transcript(path, SID, "/work/shop", git_branch="main")
    t.user("<system-reminder>harness note</system-reminder>", is_meta=True)
    t.user("Add a discount field to the checkout API in src/shop/checkout.py and test it.")
    _reply(
        t,
        [{"type": "thinking", "thinking": "Look at the checkout module first.", "signature": "s"}],
    )
    _tool(t, "Read", {"file_path": "/work/shop/src/shop/checkout.py"}, "def total(cart):\n    ...")
    _tool(t, "Grep", {"pattern": "def total", "path": "/work/shop/src"}, "src/shop/checkout.py:1")
    _tool(
        t,
        "Edit",
        {
            "file_path": "/work/shop/src/shop/checkout.py",
            "old_string": "def total(cart):",
            "new_string": "def total(cart, discount=0):\n\ndef apply_discount(amount, pct):",
        },
        "The file was updated.",
    )
    _tool(
        t,
        "Bash",
        {"command": "uv run pytest tests/test_checkout.py -q"},
        "E   TypeError: total() got an unexpected keyword argument 'discount'\n1 failed",
        error=True,
    )
    _reply(t, [{"type": "text", "text": "The test still calls the old signature; fixing it."}])
    _tool(
        t,
        "Write",
        {
            "file_path": "/work/shop/tests/test_checkout.py",
            "content": "def test_discount():\n    pass\n",
        },
        "File created successfully",
    )
    _tool(t, "Bash", {"command": "uv run pytest tests/test_checkout.py -q"}, "3 passed in 0.12s")
    _reply(t, [{"type": "text", "text": "Discount support is in; 3 tests pass."}])
    t.user(
        "No, use Decimal for money instead of float. "
        "From now on, always run ruff before committing."
    )
    _tool(t, "Read", {"file_path": "/work/shop/src/shop/money.py"}, "from decimal import Decimal")
    _tool(t, "Bash", {"command": "ruff check src"}, "All checks passed!")
    _reply(t, [{"type": "text", "text": "Switched to Decimal and ran ruff; all checks pass."}])
    append_entries(t.path, [{"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}])
    append_entries(
        t.path,
        [
            {
                "type": "user",
                "isSidechain": True,
                "uuid": str(uuid.uuid4()),
                "message": {"role": "user", "content": "sub-agent prompt"},
            }
        ],
    )
    t.user("Great. Now update the README with the new discount parameter.")
    _reply(t, [{"type": "text", "text": "Which section of the README should it go in?"}])
    return t
