"""Whether a hook's error line goes to the host now: once per prompt, not once per hook event.

A host shows a hook's stderr line to the user (Gemini CLI as a "Hook system message"), and one
broken setting fails every event of a turn alike: session start, the prompt, the turn's end, the
session's end. The user needs to read it once per prompt; the hook log keeps every row. A turn
runs from one prompt to the next, and the session start belongs to the first prompt's turn.
An error with no session (hook JSON memdir could not read) is always shown.

State: ``<cache>/hooks/shown/<session>.json`` — ``{"prompts": n, "shown": {digest: turn}}``;
derived and best effort: losing it shows a line once more.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

from memdir.atomic import atomic_write

KEPT = 50  # messages remembered per session


def _path(cache_dir: Path, session: str) -> Path:
    return cache_dir / "hooks" / "shown" / f"{session}.json"


def should_show(cache_dir: Path | None, session: str | None, event: str, message: str) -> bool:
    """True when ``message`` was not shown yet in this turn of ``session`` (and record it)."""
    if cache_dir is None or session is None:
        return True
    path = _path(cache_dir, session)
    state: dict[str, object] = {}
    with contextlib.suppress(OSError, ValueError, UnicodeDecodeError):
        loaded = json.loads(path.read_text("utf-8"))
        state = loaded if isinstance(loaded, dict) else {}
    prompts = state.get("prompts")
    prompts = prompts if isinstance(prompts, int) else 0
    shown = state.get("shown")
    shown = dict(shown) if isinstance(shown, dict) else {}
    if event == "user-prompt-submit":
        prompts += 1
    turn = prompts + 1 if event == "session-start" else prompts
    digest = hashlib.sha256(message.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    show = shown.get(digest) != turn
    shown[digest] = turn
    kept = dict(list(shown.items())[-KEPT:])
    with contextlib.suppress(OSError):
        atomic_write(path, json.dumps({"prompts": prompts, "shown": kept}))
    return show


__all__ = ["should_show"]
