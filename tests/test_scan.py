from __future__ import annotations

import os
from pathlib import Path

import pytest

from memdir import scan
from memdir.scan import HeaderCache, format_manifest, iso_mtime, scan_headers


def write(root: Path, rel: str, text: str, mtime: float | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def mem(name: str, desc: str | None = "d", mtype: str | None = "user") -> str:
    lines = ["---", f"name: {name}"]
    if desc is not None:
        lines.append(f"description: {desc}")
    if mtype is not None:
        lines.append(f"type: {mtype}")
    return "\n".join(lines) + "\n---\nbody\n"


def test_newest_first_recursive_and_excludes_index(tmp_path: Path) -> None:
    write(tmp_path, "old.md", mem("old"), 1_000)
    write(tmp_path, "sub/new.md", mem("new"), 3_000)
    write(tmp_path, "mid.md", mem("mid"), 2_000)
    write(tmp_path, "MEMORY.md", "- [x](old.md)\n", 4_000)
    write(tmp_path, "sub/MEMORY.md", "x", 4_000)
    write(tmp_path, "notes.txt", "not markdown", 5_000)
    write(tmp_path, ".hidden/x.md", mem("h"), 6_000)
    result = scan_headers(tmp_path)
    assert [h.filename for h in result.headers] == ["sub/new.md", "mid.md", "old.md"]
    assert result.errors == []


def test_cap_keeps_newest(tmp_path: Path) -> None:
    for i in range(12):
        write(tmp_path, f"m{i:02d}.md", mem(f"m{i}"), 1_000 + i)
    result = scan_headers(tmp_path, limit=5)
    assert [h.filename for h in result.headers] == [f"m{i:02d}.md" for i in range(11, 6, -1)]
    assert result.total == 12


def test_binary_files_are_reported_and_skipped_bad_headers_kept(tmp_path: Path) -> None:
    write(tmp_path, "good.md", mem("good"), 3_000)
    bad_yaml = write(tmp_path, "bad.md", "---\nname: [oops\nfoo: ]x\n---\n", 2_000)
    unclosed = write(tmp_path, "unclosed.md", "---\nname: a\n", 1_000)
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\x00\x01\x02\xff" * 10)
    latin = tmp_path / "latin.md"
    latin.write_bytes("---\nname: caf\xe9\n---\n".encode("latin-1"))
    before = {p: p.read_bytes() for p in (bad_yaml, unclosed, binary, latin)}
    result = scan_headers(tmp_path)
    # A header that does not parse never drops the memory (reference facts §3).
    assert [h.filename for h in result.headers] == ["good.md", "bad.md", "unclosed.md"]
    assert {issue.path.name for issue in result.errors} == {"bin.md", "latin.md"}
    assert {(n.path.name, n.kind) for n in result.notes} == {
        ("bad.md", "frontmatter-quoted"),
        ("unclosed.md", "frontmatter-dropped"),
    }
    assert all(p.read_bytes() == data for p, data in before.items())  # never rewritten


def test_no_frontmatter_still_counts(tmp_path: Path) -> None:
    write(tmp_path, "plain.md", "just text\n")
    [h] = scan_headers(tmp_path).headers
    assert h.description is None and h.type is None


def test_fifty_megabyte_file_reads_only_its_head(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    with open(big, "w") as fh:
        fh.write(mem("big", "a big one"))
        fh.write(("x" * 1023 + "\n") * 50 * 1024)
    [h] = scan_headers(tmp_path).headers
    assert h.description == "a big one"
    one_line = tmp_path / "oneline.md"
    one_line.write_text("y" * 50 * 1024 * 1024)
    lines = scan.read_head(one_line)
    assert sum(len(line) for line in lines) <= 30 * 8192


def test_missing_root_is_empty(tmp_path: Path) -> None:
    assert scan_headers(tmp_path / "nope").headers == []


def test_symlinked_dirs_are_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    write(root, "a.md", mem("a"))
    (root / "loop").symlink_to(root)
    assert [h.filename for h in scan_headers(root).headers] == ["a.md"]


def test_manifest_format(tmp_path: Path) -> None:
    write(tmp_path, "a.md", mem("a", "first", "feedback"), 1_700_000_000.5)
    write(tmp_path, "b.md", mem("b", None, None), 1_600_000_000)
    text = format_manifest(scan_headers(tmp_path).headers)
    assert text.splitlines() == [
        "- [feedback] a.md (2023-11-14T22:13:20.500Z): first",
        "- b.md (2020-09-13T12:26:40.000Z)",
    ]
    assert iso_mtime(0) == "1970-01-01T00:00:00.000Z"


def test_header_cache_rescan_reads_no_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "mem"
    for i in range(10_000):
        write(root, f"d{i % 50}/m{i}.md", mem(f"m{i}", f"desc {i}"))
    cache_path = tmp_path / "cache" / "headers.json"
    first = scan_headers(root, limit=None, cache=HeaderCache(cache_path))
    assert len(first.headers) == 10_000

    reads: list[Path] = []
    real = scan.read_head

    def counting(path: Path, max_lines: int = 30, *, root: Path | None = None) -> list[str]:
        reads.append(path)
        return real(path, max_lines, root=root)

    monkeypatch.setattr(scan, "read_head", counting)
    again = scan_headers(root, limit=None, cache=HeaderCache(cache_path))
    assert reads == []
    assert again.headers == first.headers

    write(root, "d0/m0.md", mem("m0", "changed description"))
    os.utime(root / "d0/m0.md", (9e9, 9e9))
    third = scan_headers(root, limit=None, cache=HeaderCache(cache_path))
    assert reads == [root / "d0/m0.md"]
    assert third.headers[0].description == "changed description"


def test_corrupt_header_cache_is_rebuilt(tmp_path: Path) -> None:
    write(tmp_path / "mem", "a.md", mem("a", "desc"))
    cache_path = tmp_path / "cache.json"
    cache_path.write_text("{not json")
    cache = HeaderCache(cache_path)
    assert cache.problem is not None and str(cache_path) in cache.problem
    [h] = scan_headers(tmp_path / "mem", cache=cache).headers
    assert h.description == "desc"
    assert HeaderCache(cache_path).problem is None


# -- issue #8 items 1-3 and #9 item 1 ----------------------------------------------------------


def test_symlink_out_of_the_dir_is_reported_never_read(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    secret = tmp_path / "outside.md"
    secret.write_text("---\ndescription: root:x:0:0 secret\n---\nroot:x:0:0\n")
    write(root, "good.md", mem("good"))
    (root / "passwd.md").symlink_to("/etc/passwd")
    (root / "sub").mkdir()
    (root / "sub" / "out.md").symlink_to(secret)
    (root / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    (root / "inside.md").symlink_to(root / "good.md")  # a link that stays inside is fine
    cache = HeaderCache(tmp_path / "cache.json")
    for attempt in range(2):  # the second scan runs on the header cache
        result = scan_headers(root, cache=cache if attempt else None)
        assert sorted(h.filename for h in result.headers) == ["good.md", "inside.md"]
        kinds = {(i.path.name, i.kind) for i in result.errors}
        assert kinds == {
            ("passwd.md", "symlink-escape"),
            ("out.md", "symlink-escape"),
            ("dangling.md", "unreadable"),
        }
        assert all("secret" not in (h.description or "") for h in result.headers)


def test_symlinked_root_still_scans(tmp_path: Path) -> None:
    real = tmp_path / "real"
    write(real, "a.md", mem("a"))
    (tmp_path / "link").symlink_to(real)
    assert [h.filename for h in scan_headers(tmp_path / "link").headers] == ["a.md"]


def test_read_head_refuses_a_file_swapped_for_an_escaping_link(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "x.md").symlink_to("/etc/passwd")
    with pytest.raises(scan.UnsafePathError):
        scan.read_head(root / "x.md", root=root.resolve())


def test_bad_field_value_is_that_files_note_and_the_rest_works(tmp_path: Path) -> None:
    write(tmp_path, "good.md", mem("good"), 2_000)
    write(tmp_path, "bad.md", "---\nname: b\ncreated: 2020-13-45\n---\nx\n", 1_000)
    result = scan_headers(tmp_path)
    assert [h.filename for h in result.headers] == ["good.md", "bad.md"]
    [note] = result.notes
    assert note.path.name == "bad.md" and note.kind == "bad-value" and "2020-13-45" in note.reason


def test_colon_descriptions_stay_in_scan_and_manifest(tmp_path: Path) -> None:
    write(tmp_path, "goal.md", "---\nname: g\ndescription: Q2 goal: ship X\ntype: project\n---\n")
    result = scan_headers(tmp_path)
    assert format_manifest(result.headers).endswith("): Q2 goal: ship X")
    assert [n.kind for n in result.notes] == ["frontmatter-quoted"]
    assert result.errors == []


def test_notes_survive_the_header_cache(tmp_path: Path) -> None:
    write(tmp_path, "goal.md", "---\ndescription: a: b\n---\n")
    cache_path = tmp_path.parent / f"{tmp_path.name}-cache.json"
    first = scan_headers(tmp_path, cache=HeaderCache(cache_path))
    second = scan_headers(tmp_path, cache=HeaderCache(cache_path))
    assert first.notes == second.notes and len(second.notes) == 1
    assert second.headers[0].description == "a: b"


def test_alias_bomb_file_is_kept_with_empty_header_and_reported(tmp_path: Path) -> None:
    levels = [f"a0: &a0 [{','.join('x' * 10)}]"]
    levels += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    write(tmp_path, "bomb.md", "---\n" + "\n".join(levels) + "\n---\nbody\n")
    result = scan_headers(tmp_path)
    assert [h.filename for h in result.headers] == ["bomb.md"]
    [note] = result.notes
    assert note.kind == "frontmatter-dropped" and "alias bomb" in note.reason
