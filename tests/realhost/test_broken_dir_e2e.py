"""A broken memory dir never blocks the host: every hook answers (the host does not have to time
it out), the session gets its reply, and memdir says what it skipped."""

from __future__ import annotations

import os
from pathlib import Path

from tests.realhost.host import ClaudeHost

GOOD = "The deploy key rotates on the first of each month (larch-owl)."


def break_memory_dir(memory_dir: Path) -> None:
    """Everything a memory dir can hold that is not a memory, beside one good memory."""
    os.mkfifo(memory_dir / "pipe.md")  # a reader that opens this blocks until a writer comes
    (memory_dir / "bad_header.md").write_text("---\nname: [unclosed\ntype: {\n---\nbody\n")
    (memory_dir / "binary.md").write_bytes(b"\x00\xff\xfe" * 1000)
    (memory_dir / "folder.md").mkdir()
    (memory_dir / "loop.md").symlink_to("loop.md")
    (memory_dir / "outside.md").symlink_to("/etc/hostname")
    (memory_dir / "dangling.md").symlink_to(memory_dir / "gone.md")


def run_in_broken_dir(host: ClaudeHost, *, fifo_index: bool) -> None:
    host.memdir(
        "add", "deploy-key", "--type", "project", "--description", "key rotation", "--body", GOOD
    )
    memory_dir = host.memory_dir()
    break_memory_dir(memory_dir)
    if fifo_index:
        (memory_dir / "MEMORY.md").unlink()
        os.mkfifo(memory_dir / "MEMORY.md")
    host.api.script("Still here.")
    # The host gives a blocked SessionStart hook 30 s before it goes on without it: a hook that
    # blocks shows up below as a missing answer, not as a slow test.
    out = host.prompt("When does the deploy key rotate?", timeout=120)
    assert "Still here." in out.stdout
    request = host.api.main_requests()[-1].text()
    assert "SessionStart hook additional context: # Memory (memdir)" in request
    assert "larch-owl" in request, "recall skipped the good memory beside the broken ones"
    events = [r["event"] for r in host.wait_until_ended()]
    assert {"session-start", "user-prompt-submit", "session-end"} <= set(events)


def test_a_broken_memory_dir_never_blocks_the_host(installed: ClaudeHost) -> None:
    run_in_broken_dir(installed, fifo_index=False)


def test_a_fifo_at_memory_md_never_blocks_the_host(installed: ClaudeHost) -> None:
    run_in_broken_dir(installed, fifo_index=True)
