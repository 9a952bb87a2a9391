from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from memdir.atomic import (
    FileLock,
    atomic_write,
    content_hash,
    ensure_dir,
    temp_name,
    temp_writer_pid,
)
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


# -- issue #8 items 5, 9 and 12 ---------------------------------------------------------------


def test_every_created_directory_level_is_0700(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "a" / "b" / "c" / "m.md", "x")
    finally:
        os.umask(old)
    for rel in ("a", "a/b", "a/b/c"):
        assert stat.S_IMODE((tmp_path / rel).stat().st_mode) == 0o700, rel


def test_failed_write_leaves_no_empty_parent_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "keep").mkdir()

    def crash(src: str, dst: str) -> None:
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated"):
        atomic_write(tmp_path / "keep" / "new" / "deeper" / "m.md", "x")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["keep"]


def test_name_too_long_for_the_filesystem_leaves_no_dirs(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        atomic_write(tmp_path / "new" / ("x" * 256 + ".md"), "x")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("size", [238, 240, 250, 255])
def test_names_up_to_the_filesystem_limit_can_be_written(tmp_path: Path, size: int) -> None:
    # Before: the temp name (".<name>.<12 hex>.tmp") overflowed NAME_MAX: Errno 36.
    for name in ("n" * (size - 3) + ".md", "é" * ((size - 3) // 2) + ".md"):
        target = tmp_path / name
        atomic_write(target, "hello")
        assert target.read_text() == "hello"
    assert all(not p.name.startswith(".") for p in tmp_path.iterdir())


def test_temp_names_carry_the_writer_pid() -> None:
    name = temp_name("note.md")
    assert name.startswith(".note.md.") and name.endswith(".tmp")
    assert temp_writer_pid(name) == os.getpid()
    assert temp_writer_pid(".note.md.0123456789ab.tmp") == 0  # the older format, no pid
    assert temp_writer_pid("note.md") is None
    assert temp_writer_pid(".memdir.lock") is None
    assert len(temp_name("ü" * 200).encode()) <= 255


def test_lock_module_imports_no_platform_only_module() -> None:
    import ast

    import memdir.atomic

    tree = ast.parse(Path(memdir.atomic.__file__).read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (
            node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
        )
    }
    assert not imported & {"fcntl", "msvcrt", "pwd", "grp", "termios"}


def test_memdir_core_imports_without_posix_only_modules() -> None:
    # What Windows lacks: fcntl, pwd, grp, termios, resource. Before: atomic.py imported fcntl
    # (and config.py pwd) at module level, so `import memdir` failed there.
    script = textwrap.dedent(
        """
        import importlib.abc, sys, warnings
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name in ("fcntl", "pwd", "grp", "termios", "resource"):
                    raise ImportError(name + " is POSIX-only")
                return None
        sys.meta_path.insert(0, Block())
        warnings.simplefilter("ignore")
        import memdir, memdir.atomic, memdir.store, memdir.scan, memdir.config, memdir.recovery
        print("imported")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "imported"


def test_lock_goes_through_the_portable_descriptor_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import filelock

    calls: list[str] = []
    real_lock, real_unlock = filelock.lock_descriptor, filelock.unlock_descriptor

    def lock(fd: int, *, blocking: bool = True, poll_interval: float = 0.05) -> bool:
        calls.append("lock")
        return real_lock(fd, blocking=blocking, poll_interval=poll_interval)

    def unlock(fd: int) -> None:
        calls.append("unlock")
        real_unlock(fd)

    monkeypatch.setattr(filelock, "lock_descriptor", lock)
    monkeypatch.setattr(filelock, "unlock_descriptor", unlock)
    with FileLock(tmp_path / ".lock", timeout=1), FileLock(tmp_path / ".lock", timeout=1):
        pass
    assert calls == ["lock", "unlock"]  # re-entry takes no second OS lock


def test_lock_file_swapped_for_a_symlink_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (tmp_path / "mem").mkdir()
    (tmp_path / "mem" / ".lock").symlink_to(outside)
    with pytest.raises(OSError):
        FileLock(tmp_path / "mem" / ".lock", timeout=0.1).acquire()
    assert not outside.exists()


def test_a_non_durable_write_is_still_whole_but_skips_the_fsyncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    path = tmp_path / "state" / "session.json"
    atomic_write(path, '{"surfaced": []}')
    assert len(synced) == 2  # the file, then its directory
    synced.clear()
    atomic_write(path, '{"surfaced": ["a.md"]}', durable=False)
    assert synced == []
    assert path.read_text() == '{"surfaced": ["a.md"]}'
    assert [p.name for p in path.parent.iterdir()] == ["session.json"]  # no temp left
