"""``memdir chat``: a real process on a pseudo-terminal, driven by a scripted model file."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main
from memdir.transcripts import read_transcript


class Terminal:
    """A child process whose stdin/stdout/stderr is a pseudo-terminal."""

    def __init__(self, argv: list[str], *, env: dict[str, str], cwd: Path) -> None:
        master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
            close_fds=True, start_new_session=True,
        )  # fmt: skip
        os.close(slave)
        self.master = master
        self.output = ""
        self._mark = 0

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not data:
            return False
        self.output += data.decode("utf-8", "replace").replace("\r\n", "\n")
        return True

    def expect(self, text: str, timeout: float = 60.0) -> str:
        """Wait until ``text`` appears after the previous match; return what came before it."""
        deadline = time.monotonic() + timeout
        while text not in self.output[self._mark :]:
            if time.monotonic() > deadline or not self._read(0.2):
                if text in self.output[self._mark :]:
                    break
                raise AssertionError(f"{text!r} not seen; output so far:\n{self.output}")
        at = self.output.index(text, self._mark)
        seen, self._mark = self.output[self._mark : at], at + len(text)
        return seen

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self, timeout: float = 60.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        if self.proc.poll() is None:
            self.proc.kill()
        code = self.proc.wait()
        while self._read(0):
            pass
        os.close(self.master)
        return code


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def script(path: Path, steps: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"steps": steps}), "utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "settings.toml").write_text("[db]\nport = 6543\n", "utf-8")
    return root


def chat(
    tmp_path: Path, project: Path, replies: Path, extra: dict[str, str] | None = None
) -> Terminal:
    env = {
        "HOME": str(tmp_path / "home"),
        "PATH": os.environ.get("PATH", os.defpath),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # the sources under test, if not installed
        "MEMDIR_MODEL": f"scripted:{replies}",
        "HF_HUB_OFFLINE": "1",
        "TERM": "dumb",
        "MEMDIR_RECALL": "local",  # the scripted replies are for the chat model only
        **(extra or {}),
    }
    # A generous recall wait: a loaded CI machine must not turn this into a timing test.
    argv = [sys.executable, "-m", "memdir", "chat", "--extract", "rules", "--recall-wait", "60"]
    return Terminal(argv, env=env, cwd=project)


def test_a_chat_that_remembers_across_two_sessions(tmp_path: Path, project: Path) -> None:
    first = script(
        tmp_path / "first.json",
        [
            {"tool": "Read", "input": {"file_path": str(project / "settings.toml")}},
            {"text": "Staging uses port 6543; I will keep that in mind."},
        ],
    )
    term = chat(tmp_path, project, first)
    term.expect("/help for commands")
    term.expect("> ")
    term.send("Remember that the staging database listens on port 6543.")
    term.expect("[Read] ")
    term.expect("Staging uses port 6543; I will keep that in mind.")
    deadline = time.monotonic() + 30
    while "Saved 1 memory" not in term.output:  # extraction runs in the background
        assert time.monotonic() < deadline, term.output
        term.expect("> ")
        term.send("/status")
    term.expect("> ")
    term.send("/memory")
    listing = term.expect("> ")
    assert "staging_database" in listing and "[project]" in listing
    term.send("/exit")
    term.expect("finishing background work")
    assert term.close() == 0

    second = script(tmp_path / "second.json", [{"text": "It listens on port 6543."}])
    term = chat(tmp_path, project, second)
    term.expect("> ")
    term.send("which port does the staging database use?")
    recalled = term.expect("It listens on port 6543.")
    assert "↳ recalled: " in recalled and "staging_database" in recalled
    term.expect("> ")
    term.send("/forget nothing-here.md")
    assert "error: no such memory" in term.expect("> ")
    term.send("/exit")
    assert term.close() == 0

    transcripts = sorted((tmp_path / "home" / ".memdir" / "projects").glob("*/*.jsonl"))
    assert len(transcripts) == 2
    later = max(transcripts, key=lambda p: p.stat().st_mtime)
    entries = read_transcript(later).entries
    user_blocks = entries[0]["message"]["content"]
    assert user_blocks[0]["text"] == "which port does the staging database use?"
    assert "<system-reminder>" in user_blocks[1]["text"] and "6543" in user_blocks[1]["text"]


def test_ctrl_d_ends_the_session_cleanly(tmp_path: Path, project: Path) -> None:
    term = chat(tmp_path, project, script(tmp_path / "r.json", []))
    term.expect("> ")
    os.write(term.master, b"\x04")
    term.expect("finishing background work")
    assert term.close() == 0


def test_without_a_model_it_explains_and_fails(tmp_path: Path, project: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["chat"], env={"HOME": str(tmp_path)}, cwd=project, stdout=out, stderr=err)
    assert code == 2
    assert "MEMDIR_MODEL" in err.getvalue() and "scripted:" in err.getvalue()


def test_a_broken_script_file_is_a_clear_error(tmp_path: Path, project: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"steps": [{"tool": "Read", "input": 5}]}', "utf-8")
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(tmp_path), "MEMDIR_MODEL": f"scripted:{bad}"}
    assert main(["chat"], env=env, cwd=project, stdout=out, stderr=err) == 2
    assert "step 1" in err.getvalue()


def test_no_tools_offers_the_model_nothing_to_call(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replies = script(
        tmp_path / "r.json",
        [{"tool": "Read", "input": {"file_path": str(project / "settings.toml")}}, {"text": "ok"}],
    )
    monkeypatch.setattr("sys.stdin", io.StringIO("read the settings file please\n"))
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(tmp_path / "home"), "MEMDIR_MODEL": f"scripted:{replies}"}
    argv = ["chat", "--no-tools", "--extract", "rules", "--recall-wait", "0"]
    assert main(argv, env=env, cwd=project, stdout=out, stderr=err) == 0, err.getvalue()
    text = out.getvalue()
    assert "[Read] error:" in text and "port = 6543" not in text  # the call had no tool to run
    assert "ok" in text


def test_exit_while_the_first_index_build_runs_is_clean(tmp_path: Path, project: Path) -> None:
    """Regression (SIGABRT, exit 134): the search-index build on the warm-up thread was still
    inside onnxruntime when the process exited; the exit now stops it between batches (today the
    model works behind the index's first stage, on the distilling and filling threads)."""
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    for i in range(600):  # a few seconds of embedding: still building when /exit comes
        (memory_dir / f"note_{i}.md").write_text(
            f"---\nname: Note {i}\ndescription: deploy note {i} about service {i * 7}\n"
            f"type: project\n---\nService {i * 7} deploys with step {i}.\n",
            "utf-8",
        )
    replies = script(tmp_path / "r.json", [])
    term = chat(tmp_path, project, replies, {"MEMDIR_DIR": str(memory_dir)})
    term.expect("> ")
    # /exit only once the build is embedding: the model loads in well under 3 s of CPU, and
    # 600 memories take several times that (the search index is saved only at the end)
    deadline = time.monotonic() + 120
    while cpu_seconds(term.proc.pid) < 3.0:
        assert time.monotonic() < deadline and term.proc.poll() is None, term.output
        time.sleep(0.1)
    cache = tmp_path / "home" / ".memdir" / "cache"
    # The index's first stage is done in well under a second now (issue #29); the model is still
    # at work behind it: distilling the static table (30 s of CPU) and reading the memories.
    assert not list(cache.rglob("static-*.npy")) and not list(cache.rglob("model-vectors.npz"))
    term.send("/exit")
    assert term.close() == 0, term.output
    assert "terminate called" not in term.output
