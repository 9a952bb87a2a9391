from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from memdir.atomic import content_hash
from memdir.errors import (
    ConflictError,
    EditError,
    FrontmatterError,
    MemoryExistsError,
    MemoryNotFoundError,
    SecretFoundError,
    UnreadableFileError,
    UnsafePathError,
)
from memdir.store import MemoryStore, slugify


def fixed_clock() -> dt.datetime:
    return dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "mem", clock=fixed_clock)


def index_text(store: MemoryStore, rel: str = "MEMORY.md") -> str:
    return (store.root / rel).read_text()


def test_create_writes_frontmatter_and_index(store: MemoryStore) -> None:
    m = store.create("User role", "Data scientist, cares about logging", "user", "Body text")
    assert m.path == "user_role.md"
    text = (store.root / "user_role.md").read_text()
    assert text.startswith(
        "---\nname: User role\ndescription: Data scientist, cares about logging\n"
    )
    assert "created: '2026-11-29'" in text and text.endswith("---\nBody text\n")
    assert (
        index_text(store) == "- [User role](user_role.md) — Data scientist, cares about logging\n"
    )
    again = store.read("user_role.md")
    assert (again.name, again.type, again.body) == ("User role", "user", "Body text\n")


def test_create_refuses_existing_unless_overwrite(store: MemoryStore) -> None:
    store.create("a", "d", "user", "1")
    with pytest.raises(MemoryExistsError):
        store.create("a", "d", "user", "2")
    store.create("a", "d2", "user", "2", overwrite=True)
    assert store.read("a.md").body == "2\n"
    assert index_text(store).count("a.md") == 1


def test_save_updates_and_keeps_index_in_step(store: MemoryStore) -> None:
    m = store.create("Proj", "old hook", "project", "x")
    m.description = "new hook"
    store.save(m)
    assert index_text(store) == "- [Proj](proj.md) — new hook\n"


def test_update_is_read_modify_write(store: MemoryStore) -> None:
    store.create("Log", "d", "project", "a\n")

    def add_line(m):  # type: ignore[no-untyped-def]
        m.body += "b\n"
        return m

    store.update("log.md", add_line)
    assert store.read("log.md").body == "a\nb\n"


def test_expected_hash_conflict_writes_nothing(store: MemoryStore) -> None:
    store.create("a", "d", "user", "v1")
    h = store.file_hash("a.md")
    store.edit("a.md", "v1", "v2", expected_hash=h)
    with pytest.raises(ConflictError):
        store.edit("a.md", "v2", "v3", expected_hash=h)
    assert store.read("a.md").body == "v2\n"
    with pytest.raises(ConflictError):
        store.write_text("new.md", "x", expected_hash=content_hash("y"))
    assert not (store.root / "new.md").exists()


@pytest.mark.parametrize(
    ("old", "err"), [("missing", "not found"), ("same", "occurs 2 times"), ("", "empty")]
)
def test_edit_errors(store: MemoryStore, old: str, err: str) -> None:
    store.write_text("e.md", "same same\n")
    with pytest.raises(EditError, match=err):
        store.edit("e.md", old, "other")
    assert (store.root / "e.md").read_text() == "same same\n"


def test_edit_replace_all(store: MemoryStore) -> None:
    store.write_text("e.md", "same same\n")
    store.edit("e.md", "same", "diff", replace_all=True)
    assert (store.root / "e.md").read_text() == "diff diff\n"


def test_delete_and_rename_maintain_index(store: MemoryStore) -> None:
    store.create("a", "first", "user", "1")
    store.create("b", "second", "user", "2")
    store.rename("a.md", "sub/a2.md")
    assert (store.root / "sub/a2.md").exists() and not (store.root / "a.md").exists()
    assert index_text(store) == "- [b](b.md) — second\n- [a](sub/a2.md) — first\n"
    with pytest.raises(MemoryExistsError):
        store.rename("b.md", "sub/a2.md")
    store.delete("b.md")
    assert index_text(store) == "- [a](sub/a2.md) — first\n"
    with pytest.raises(MemoryNotFoundError):
        store.delete("b.md")
    with pytest.raises(MemoryNotFoundError):
        store.read("b.md")


def test_team_memories_get_their_own_index(store: MemoryStore) -> None:
    store.create("conv", "team convention", "project", "x", rel="team/conv.md")
    assert index_text(store, "team/MEMORY.md") == "- [conv](conv.md) — team convention\n"
    assert not (store.root / "MEMORY.md").exists()


def test_hand_written_index_lines_survive(store: MemoryStore) -> None:
    store.write_text("MEMORY.md", "# Index\nA note I wrote.\n")
    store.create("a", "d", "user", "1")
    store.delete("a.md")
    assert index_text(store) == "# Index\nA note I wrote.\n"


@pytest.mark.parametrize(
    "bad", ["../x.md", "/etc/x.md", "a/../../x.md", "x\x00.md", "a\\b.md", "%2e%2e/x.md"]
)
def test_unsafe_names_write_nothing(store: MemoryStore, tmp_path: Path, bad: str) -> None:
    with pytest.raises(UnsafePathError):
        store.write_text(bad, "x")
    with pytest.raises(UnsafePathError):
        store.create("n", "d", "user", "b", rel=bad)
    written = [p for p in tmp_path.parent.rglob("*") if p.is_file() and p.name != ".memdir.lock"]
    assert [p for p in written if p.is_relative_to(tmp_path)] == []


def test_symlink_out_of_the_dir_is_refused(store: MemoryStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    store.root.mkdir(parents=True)
    (store.root / "evil").symlink_to(outside)
    with pytest.raises(UnsafePathError):
        store.write_text("evil/x.md", "pwned")
    assert list(outside.iterdir()) == []


def test_absolute_path_inside_root_is_accepted(store: MemoryStore) -> None:
    rel = store.write_text(store.root / "abs.md", "x")
    assert rel == "abs.md"


def test_guards_run_before_writing(store: MemoryStore) -> None:
    def no_secrets(rel: str, text: str) -> None:
        if "AKIA" in text:
            raise SecretFoundError(["AWS Access Token"], path=rel)

    guarded = MemoryStore(store.root, guards=[no_secrets])
    with pytest.raises(SecretFoundError):
        guarded.create("k", "d", "reference", "key AKIA...")
    assert not (store.root / "k.md").exists()
    assert not (store.root / "MEMORY.md").exists()


def test_binary_and_oversized_files_are_refused_with_path(store: MemoryStore) -> None:
    store.root.mkdir(parents=True)
    (store.root / "bin.md").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UnreadableFileError, match=r"bin\.md"):
        store.read("bin.md")
    big = store.root / "big.md"
    with open(big, "wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    with pytest.raises(UnreadableFileError, match=r"big\.md"):
        store.read_text("big.md")


def test_corrupt_frontmatter_read_names_the_file(store: MemoryStore) -> None:
    store.write_text("bad.md", "---\nname: x\n- y\n---\n")
    with pytest.raises(FrontmatterError, match=r"bad\.md"):
        store.read("bad.md")
    assert (store.root / "bad.md").read_text() == "---\nname: x\n- y\n---\n"


def test_read_quotes_values_the_reference_would_quote(store: MemoryStore) -> None:
    store.write_text("q.md", "---\nname: q\ndescription: Q2 goal: ship it\n---\nbody\n")
    assert store.read("q.md").description == "Q2 goal: ship it"


def test_check_and_rebuild_index(store: MemoryStore) -> None:
    store.create("a", "first", "user", "1")
    store.root.joinpath("b.md").write_text("---\nname: B\ndescription: second\n---\n")
    store.write_text("MEMORY.md", (store.root / "MEMORY.md").read_text() + "- [Gone](gone.md)\n")
    [report] = store.check_index()
    assert report.unindexed == ["b.md"] and report.dead_links == ["gone.md"]
    assert store.rebuild_index() == ["MEMORY.md"]
    assert index_text(store) == "- [a](a.md) — first\n- [B](b.md) — second\n"
    assert all(r.ok for r in store.check_index())


def test_rebuild_keeps_hand_written_lines_and_web_links(store: MemoryStore) -> None:
    store.write_text("MEMORY.md", "# Mine\n- [Docs](https://example.org) — docs\n")
    store.create("a", "first", "user", "1")
    store.rebuild_index()
    assert (
        index_text(store) == "# Mine\n- [Docs](https://example.org) — docs\n\n- [a](a.md) — first\n"
    )


def test_files_are_private(store: MemoryStore) -> None:
    store.create("a", "d", "user", "1")
    assert os.stat(store.root / "a.md").st_mode & 0o777 == 0o600
    assert os.stat(store.root).st_mode & 0o777 == 0o700


@pytest.mark.parametrize(
    ("name", "slug"), [("User Role!", "user_role"), ("Ünïcode ok", "ünïcode_ok")]
)
def test_slugify(name: str, slug: str) -> None:
    assert slugify(name) == slug


def test_crash_while_writing_a_memory_leaves_old_file_and_index(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.create("a", "first", "user", "old body")
    before_file = (store.root / "a.md").read_bytes()
    before_index = index_text(store)

    def crash(src: object, dst: object) -> None:
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="power cut"):
        store.create("a", "second", "user", "new body", overwrite=True)
    monkeypatch.undo()
    assert (store.root / "a.md").read_bytes() == before_file
    assert index_text(store) == before_index
    assert sorted(p.name for p in store.root.iterdir()) == [".memdir.lock", "MEMORY.md", "a.md"]


def test_crash_between_memory_and_index_write_is_repaired_on_the_next_write(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memdir.index as index_module

    real = index_module.atomic_write

    def crash_on_index(path: Path, data: str | bytes, **kw: int) -> None:
        if path.name == "MEMORY.md":
            raise OSError("crash before the index line")
        real(path, data, **kw)

    monkeypatch.setattr(index_module, "atomic_write", crash_on_index)
    with pytest.raises(OSError):
        store.create("b", "second", "user", "complete body")
    monkeypatch.undo()
    assert store.read("b.md").body == "complete body\n"  # the memory itself is whole
    [report] = store.check_index()
    assert report.unindexed == ["b.md"]  # the drift is reported until the next locked write
    assert (store.root / ".memdir.dirty").exists()
    store.create("c", "third", "user", "x")
    assert index_text(store) == "- [b](b.md) — second\n- [c](c.md) — third\n"
    assert not (store.root / ".memdir.dirty").exists()
