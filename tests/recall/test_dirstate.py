"""DirState: changes found from directory mtimes, in-place edits by sweeps, racy listings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memdir import scan
from memdir.recall import dirstate
from memdir.recall.dirstate import DirState


def put(root: Path, rel: str, text: str = "x") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def age(path: Path, seconds: float = 60.0) -> None:
    """Move a path's mtime into the past, as if it had been written a while ago."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


@pytest.fixture
def big(tmp_path: Path) -> tuple[Path, DirState]:
    """A dir above the full-stat limit, with every mtime settled (not racy)."""
    root = tmp_path / "mem"
    for rel in ("a.md", "b/c.md", "b/d.md", "e/f/g.md"):
        age(put(root, rel))
    for d in (root / "e" / "f", root / "e", root / "b", root):
        age(d)
    state = DirState(root, full_stat_limit=0, sweep_interval=3600)
    first = state.poll()
    assert first.full and sorted(first.changed) == ["a.md", "b/c.md", "b/d.md", "e/f/g.md"]
    return root, state


def test_same_listing_rules_as_the_scan(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    rels = ("a.md", "MEMORY.md", ".hidden.md", ".cache/x.md", "notes.txt", "team/t.md")
    for rel in (*rels, "logs/2026/12/2026-12-02.md", "team/logs/kept.md"):
        put(root, rel)
    (root / "link").symlink_to(root / "team", target_is_directory=True)
    listed = ["a.md", "team/logs/kept.md", "team/t.md"]  # the daily logs are not memories
    assert sorted(DirState(root).poll().changed) == listed
    assert sorted(rel for rel, _entry in scan.iter_memory_files(root)) == listed


def test_nothing_changed_lists_no_directory(
    big: tuple[Path, DirState], monkeypatch: pytest.MonkeyPatch
) -> None:
    _root, state = big
    listed: list[str] = []
    original = DirState._list

    def spy(self: DirState, prefix: str, *args: object) -> int | None:
        listed.append(prefix)
        return original(self, prefix, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(DirState, "_list", spy)
    delta = state.poll()
    assert not delta and not delta.full and listed == []


def test_added_removed_and_rewritten_files_are_found(big: tuple[Path, DirState]) -> None:
    root, state = big
    put(root, "b/new.md")
    (root / "b" / "c.md").unlink()
    (root / "e" / "f" / "g.md").rename(root / "e" / "f" / "h.md")
    delta = state.poll()
    assert sorted(delta.changed) == ["b/new.md", "e/f/h.md"]
    assert delta.removed == {"b/c.md", "e/f/g.md"}
    assert sorted(state.files) == ["a.md", "b/d.md", "b/new.md", "e/f/h.md"]


def test_an_atomic_replace_under_the_same_name_is_found(big: tuple[Path, DirState]) -> None:
    from memdir.atomic import atomic_write

    root, state = big
    atomic_write(root / "b" / "d.md", "x")  # same name, same size: only the inode differs
    assert list(state.poll().changed) == ["b/d.md"]


def test_new_and_removed_directories(big: tuple[Path, DirState]) -> None:
    import shutil

    root, state = big
    put(root, "x/y/z.md")
    shutil.rmtree(root / "e")
    delta = state.poll()
    assert list(delta.changed) == ["x/y/z.md"] and delta.removed == {"e/f/g.md"}


def test_in_place_edits_are_found_by_the_sweep(big: tuple[Path, DirState]) -> None:
    root, state = big
    path = root / "b" / "d.md"
    with open(path, "a") as fh:  # in place: the directory's mtime does not move
        fh.write("more")
    assert not state.poll()
    state.sweep_interval = 0
    delta = state.poll()
    assert delta.full and list(delta.changed) == ["b/d.md"]


def test_small_dirs_are_always_fully_stat_ed(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    path = put(root, "a.md")
    state = DirState(root)
    state.poll()
    with open(path, "a") as fh:
        fh.write("edit")
    age(root)
    assert list(state.poll().changed) == ["a.md"]


def test_a_directory_listed_in_its_own_clock_tick_is_listed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "mem"
    put(root, "a.md")
    state = DirState(root, full_stat_limit=0, sweep_interval=3600)
    state.poll()  # the directory was modified just now: racy
    frozen = os.stat(root).st_mtime_ns
    put(root, "b.md")
    os.utime(root, ns=(frozen, frozen))  # a coarse clock: the new file left the mtime as it was
    monkeypatch.setattr(dirstate, "RACY_SECONDS", 0.0)  # from now on every listing is settled
    assert list(state.poll().changed) == ["b.md"]
    put(root, "c.md")
    os.utime(root, ns=(frozen, frozen))
    assert not state.poll()  # once settled, only a moved mtime triggers a listing


def test_missing_root_is_empty_not_an_error(tmp_path: Path) -> None:
    state = DirState(tmp_path / "absent")
    assert not state.poll() and state.files == {}


def test_links_out_of_the_dir_are_never_listed(tmp_path: Path) -> None:
    """Regression: the incremental index listed ``ln -s /etc/passwd passwd.md`` and recall
    printed it; the lister now applies the scan's link rule (links inside are fine)."""
    root = tmp_path / "mem"
    put(root, "a.md")
    outside = tmp_path / "secret.md"
    outside.write_text("CANARY\n")
    (root / "passwd.md").symlink_to(outside)
    (root / "alias.md").symlink_to(root / "a.md")
    (root / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    assert sorted(DirState(root).poll().changed) == ["a.md", "alias.md"]
