from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from memdir.atomic import FileLock, atomic_write, content_hash, ensure_dir
from memdir.errors import LockHeldError


def test_atomic_write_creates_private_file_and_dirs(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "m.md"
    atomic_write(target, "hello")
    assert target.read_text() == "hello"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "m.md"
    atomic_write(target, "one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.md"]


def test_crash_between_temp_write_and_rename_keeps_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "m.md"
    atomic_write(target, "original")

    def crash(src: str, dst: str) -> None:
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        atomic_write(target, "half-written new content")
    assert target.read_text() == "original"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.md"]


def test_content_hash_is_sha256_of_utf8() -> None:
    assert content_hash("é") == content_hash("é".encode())
    assert len(content_hash("x")) == 64


def test_ensure_dir_is_idempotent(tmp_path: Path) -> None:
    d = ensure_dir(tmp_path / "x")
    assert ensure_dir(d) == d


def test_lock_is_reentrant_across_instances_in_one_thread(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    with FileLock(path, timeout=1), FileLock(path, timeout=1):
        pass
    with FileLock(path, timeout=1):
        pass


def test_lock_serialises_threads(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    counter = {"n": 0}

    def work() -> None:
        for _ in range(200):
            with FileLock(path):
                value = counter["n"]
                counter["n"] = value + 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter["n"] == 800


def test_lock_held_by_another_process_times_out(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    holder = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from memdir.atomic import FileLock
        with FileLock(Path({str(path)!r})):
            print("held", flush=True)
            sys.stdin.readline()
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            assert proc.stdout.readline().strip() == "held"
            with pytest.raises(LockHeldError):
                FileLock(path, timeout=0.2).acquire()
        finally:
            proc.stdin.write("\n")
            proc.stdin.flush()
            proc.wait(timeout=10)
    with FileLock(path, timeout=2):
        pass


def test_release_without_acquire_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        FileLock(tmp_path / ".lock").release()
