"""Which file a hook may read as the session transcript: the host names it, memdir checks it.

Rule (issue #21.3). ``transcript_path`` comes from the host's hook JSON; what memdir reads there
can become a memory (Stop extraction) or session notes, and so reach the model later. It is read
only when:

- it is an absolute path to a **regular file** — a FIFO would block the hook until the host's
  timeout, a device never ends;
- if its last component is a **symlink**, the link resolves inside one of the dirs where the
  host keeps transcripts (the dialect's ``transcript_roots``: Claude Code's
  ``$CLAUDE_CONFIG_DIR/projects``, Codex's ``$CODEX_HOME/sessions``, ...). A link to any other
  file (``~/.ssh/config``, another project's notes) is refused.

Parent directories may be links (a ``~/.claude`` kept in a dotfiles repo), and a regular file the
host names outside the projects dir is read: the host decides where it writes transcripts. The
path returned is the resolved one, so a link swapped afterwards does not change what is read;
the reader itself (:func:`memdir.transcripts.read_transcript`) refuses non-regular files again
without blocking.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from memdir.errors import HookInputError
from memdir.pathsafe import is_within


def checked_transcript(raw: str | None, roots: Sequence[Path]) -> Path:
    """The resolved transcript file to read, or :class:`HookInputError` saying why not."""
    if not raw:
        raise HookInputError("no transcript_path in the hook input")
    path = Path(raw)
    if not path.is_absolute():
        raise HookInputError(f"transcript_path {raw!r} is not an absolute path")
    try:
        link = stat.S_ISLNK(os.lstat(path).st_mode)
        real = Path(os.path.realpath(path, strict=True))
        mode = os.stat(real).st_mode
    except (OSError, RuntimeError, ValueError):
        raise HookInputError(f"no transcript at {raw}") from None
    if link:
        homes = [Path(os.path.realpath(root)) for root in roots]
        if not any(is_within(home, real) for home in homes):
            where = ", ".join(str(h) for h in homes) or "none"
            raise HookInputError(
                f"transcript_path {raw} is a symlink that leaves the host's transcript dirs "
                f"({where}); not read"
            )
    if not stat.S_ISREG(mode):
        raise HookInputError(f"transcript_path {raw} is not a regular file; not read")
    return real


__all__ = ["checked_transcript"]
