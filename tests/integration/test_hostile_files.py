"""Hostile files for `compact`, `install` and the index, run as a user would (issue #22).

Every case is a real ``memdir`` process with a timeout: a hang fails the test instead of the run.
The rule for each: no traceback, no hang, one clear error line (exit 2) or the work done with the
bad part skipped and reported, and nothing the user owns replaced or changed behind their back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.session.support import long_session

DEEP_LINE = b"[" * 200_000 + b"]" * 200_000


class User:
    """One user's machine: a HOME and a git project, memdir run as a process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.project = root / "project"
        self.home.mkdir()
        (self.project / ".git").mkdir(parents=True)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "CLAUDE_"))}
        self.env = {**base, "HOME": str(self.home)}

    def __call__(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memdir", *argv],
            capture_output=True,
            text=True,
            cwd=self.project,
            env=self.env,
            timeout=timeout,
            check=False,
        )


@pytest.fixture
def user(tmp_path: Path) -> User:
    return User(tmp_path)


def one_clear_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memdir: error: "), proc.stderr
    return lines[0]


# -- compact ------------------------------------------------------------------------------------


def test_compact_skips_a_200k_deep_line_and_reports_it(user: User) -> None:
    t = long_session(user.root / "t.jsonl", turns=30)
    with open(t.path, "ab") as fh:
        fh.write(DEEP_LINE + b"\n")
    t.user("One more request after the hostile line.")
    proc = user("compact", str(t.path), "--window", "40000")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "nested too deeply" in proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["report"]["tokens_before"] > payload["report"]["tokens_after"]


def test_compact_json_output_survives_a_lone_surrogate(user: User) -> None:
    t = long_session(user.root / "t.jsonl", turns=30)
    t.user("the last request holds a lone surrogate: \ud800 (from a broken client)")
    proc = user("--json", "compact", str(t.path), "--window", "40000")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    payload = json.loads(proc.stdout)  # valid JSON
    texts = json.dumps(payload["messages"], ensure_ascii=False)
    assert "lone surrogate: \ufffd (from" in texts  # read as U+FFFD, as a UTF-8 decoder would


def test_compact_refuses_a_fifo_at_once(user: User) -> None:
    fifo = user.root / "f.jsonl"
    os.mkfifo(fifo)
    line = one_clear_line(user("compact", str(fifo), timeout=30))
    assert "not a regular file" in line


# -- install ------------------------------------------------------------------------------------


def settings_path(user: User) -> Path:
    path = user.project / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    return path


def test_install_over_deeply_nested_settings_is_a_clear_refusal(user: User) -> None:
    settings = settings_path(user)
    hostile = '{"x":' + "[" * 100_000 + "]" * 100_000 + "}"
    settings.write_text(hostile)
    line = one_clear_line(user("install", "claude-code", "--project"))
    assert str(settings) in line and "nested too deeply" in line
    assert settings.read_text() == hostile
    assert not (user.project / ".mcp.json").exists()  # nothing half-installed
    assert not (user.home / ".memdir" / "installs.json").exists()


def test_install_writes_through_a_settings_symlink_and_keeps_the_link(user: User) -> None:
    settings = settings_path(user)
    shared = user.root / "dotfiles" / "claude-settings.json"
    shared.parent.mkdir()
    original = '{\n  "model": "opus"\n}\n'
    shared.write_text(original)
    settings.symlink_to(shared)

    proc = user("install", "claude-code", "--project")
    assert proc.returncode == 0, proc.stderr
    assert settings.is_symlink() and os.readlink(settings) == str(shared)
    merged = json.loads(shared.read_text())
    assert merged["model"] == "opus" and "UserPromptSubmit" in merged["hooks"]

    proc = user("uninstall", "claude-code", "--project")
    assert proc.returncode == 0, proc.stderr
    assert settings.is_symlink() and shared.read_text() == original


def test_install_refuses_a_dangling_settings_symlink(user: User) -> None:
    settings = settings_path(user)
    settings.symlink_to(user.root / "nowhere" / "settings.json")
    line = one_clear_line(user("install", "claude-code", "--project"))
    assert "dangling symlink" in line
    assert settings.is_symlink() and not settings.exists()
    assert not (user.root / "nowhere").exists()
    assert not (user.project / ".mcp.json").exists()


def test_install_refuses_a_fifo_settings_file_at_once(user: User) -> None:
    settings = settings_path(user)
    os.mkfifo(settings)
    line = one_clear_line(user("install", "claude-code", "--project", timeout=30))
    assert "not a regular file" in line
    assert not (user.project / ".mcp.json").exists()


# -- the index and crash leftovers --------------------------------------------------------------


def test_index_check_and_doctor_agree_that_retired_memories_are_not_indexed(user: User) -> None:
    """Issue #22.8: after retire + rebuild, `index check` said "unindexed", doctor said fine."""
    for name in ("Alpha", "Beta"):
        assert user("add", name, "-d", f"{name} thing", "-t", "project", "-b", "x").returncode == 0
    assert user("retire", "alpha.md", "--reason", "no longer true").returncode == 0
    assert user("index", "rebuild").returncode == 0
    check = user("--json", "index", "check")
    doctor = user("--json", "doctor")
    assert (check.returncode, doctor.returncode) == (0, 0), (check.stdout, doctor.stdout)
    assert json.loads(check.stdout)[0]["unindexed"] == []
    assert json.loads(doctor.stdout)["inactive"][0]["path"] == "alpha.md"


def test_dream_removes_a_stale_temp_file_as_doctor_promises(user: User) -> None:
    """Issue #22.9: a temp of a dead writer survived `dream` and every later write."""
    assert user("add", "Alpha", "-d", "alpha thing", "-t", "project", "-b", "x").returncode == 0
    memory_dir = Path(json.loads(user("--json", "where").stdout)["paths"]["memory_dir"])
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], **_OUT)
    stale = memory_dir / f".a.md.{int(dead.stdout)}-deadbeef.tmp"
    stale.write_text("half a file")
    doctor = json.loads(user("--json", "doctor").stdout)
    assert [p["kind"] for p in doctor["problems"]] == ["stale-temp"]
    assert "removed on the next locked write" in doctor["problems"][0]["detail"]
    proc = user("dream")
    assert proc.returncode == 0, proc.stderr
    assert not stale.exists()
    assert user("doctor").returncode == 0


_OUT: dict[str, object] = {"capture_output": True, "text": True, "check": True}


def test_doctor_names_memories_recall_reads_only_in_part(user: User) -> None:
    """Issue #18.9: recall indexes a bounded prefix of each memory; doctor says which files."""
    assert user("add", "Huge", "-d", "a long memory", "-t", "project", "-b", "x").returncode == 0
    memory_dir = Path(json.loads(user("--json", "where").stdout)["paths"]["memory_dir"])
    with open(memory_dir / "huge.md", "a") as fh:
        fh.write("filler words for a long memory\n" * 10_000)
    doctor = user("--json", "doctor")
    assert doctor.returncode == 0, doctor.stdout  # a note, not a problem
    [partial] = json.loads(doctor.stdout)["partly_indexed"]
    assert partial["path"] == "huge.md" and partial["bytes"] > partial["indexed_bytes"]
    assert "huge.md" in user("doctor").stdout  # the text form says it too


# -- FIFOs wherever memdir reads a file it did not create (issue #18.2) ---------------------------

READERS = [
    ("list",),
    ("manifest",),
    ("show", "pipe.md"),
    ("index", "check"),
    ("index", "rebuild"),
    ("doctor",),
    ("prompt",),
    ("recall", "deploys"),
    ("reindex",),
    ("add", "Next", "-d", "a locked write", "-t", "user", "-b", "x"),
    ("dream",),
    ("secrets", "redact", "pipe.md"),
]


def test_no_reader_blocks_on_a_fifo(user: User) -> None:
    """Every command that reads the memory dir, with FIFOs planted afresh before each one."""
    assert user("add", "Deploys", "-d", "how we deploy", "-t", "project", "-b", "x").returncode == 0
    memory_dir = Path(json.loads(user("--json", "where").stdout)["paths"]["memory_dir"])
    os.mkfifo(user.project / "pipe.md")  # `secrets redact` reads a path relative to the cwd
    for argv in READERS:
        for rel in ("MEMORY.md", "pipe.md", ".memdir.dirty", ".consolidate-lock"):
            (memory_dir / rel).unlink(missing_ok=True)  # a write may have replaced one
            os.mkfifo(memory_dir / rel)
        proc = user(*argv, timeout=60)  # a blocked reader would hang here until the timeout
        assert "Traceback" not in proc.stderr, (argv, proc.stderr)
        assert proc.returncode in (0, 1, 2), (argv, proc.stderr)


def test_a_fifo_settings_file_is_one_clear_error(user: User) -> None:
    settings = user.home / ".memdir" / "settings.json"
    settings.parent.mkdir()
    os.mkfifo(settings)
    line = one_clear_line(user("list", timeout=30))
    assert str(settings) in line and "not a regular file" in line
