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


def test_corrupt_and_binary_files_are_reported_and_skipped(tmp_path: Path) -> None:
    write(tmp_path, "good.md", mem("good"))
    bad_yaml = write(tmp_path, "bad.md", "---\nname: [oops\n---\n")
    unclosed = write(tmp_path, "unclosed.md", "---\nname: a\n")
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\x00\x01\x02\xff" * 10)
    latin = tmp_path / "latin.md"
    latin.write_bytes("---\nname: caf\xe9\n---\n".encode("latin-1"))
    before = {p: p.read_bytes() for p in (bad_yaml, unclosed, binary, latin)}
    result = scan_headers(tmp_path)
    assert [h.filename for h in result.headers] == ["good.md"]
    reported = {issue.path.name for issue in result.errors}
    assert reported == {"bad.md", "unclosed.md", "bin.md", "latin.md"}
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

    def counting(path: Path, max_lines: int = 30) -> list[str]:
        reads.append(path)
        return real(path, max_lines)

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
