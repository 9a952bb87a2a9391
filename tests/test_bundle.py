"""Export a memory dir, restore it byte for byte; a bundle that lies or attacks writes nothing."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io
import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from memdir.bundle import export_bundle, read_bundle, restore_bundle, select_files
from memdir.bundle_archive import DISTILLED_NAME, Limits
from memdir.bundle_manifest import BUNDLE_FORMAT_VERSION
from memdir.consolidate.logs import DISTILLED_NAME as LOGS_DISTILLED_NAME
from memdir.errors import BundleError

NOW = dt.datetime(2026, 12, 2, 7, 0, tzinfo=dt.UTC)
FILES: dict[str, bytes] = {
    "MEMORY.md": "- [数据库测试规范](数据库测试规范.md) — 真实数据库\n- hand-written\n".encode(),
    "数据库测试规范.md": "---\nname: 数据库测试规范\ndescription: 集成测试必须使用真实数据库\n"
    "type: feedback\n---\n上次模拟测试通过了。\n".encode(),
    "q2.md": b"---\nname: Q2\ndescription: Q2 goal: ship X\ntype: project\n---\nbad YAML kept\n",
    "bom-crlf.md": b"\xef\xbb\xbf---\r\nname: CRLF\r\ntype: user\r\n---\r\nbody\r\n",
    "no-frontmatter.md": b"just text, no header",
    "empty.md": b"",
    "binary.md": b"\xff\xfe\x00not utf-8",
    "deep/er/nested.md": b"---\nname: nested\n---\n",
    "team/MEMORY.md": b"- [Squash](squash.md) \xe2\x80\x94 team rule\n",
    "team/squash.md": b"---\nname: Squash merges\ntype: feedback\n---\nAlways.\n",
    "logs/2026/12/2026-12-01.md": b"- 09:00 \xe2\x80\x94 shipped\n",
    DISTILLED_NAME: b'{"version": 1}\n',
}


def make_dir(root: Path, files: dict[str, bytes] = FILES) -> Path:
    for i, (rel, data) in enumerate(sorted(files.items())):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, ns=(1_700_000_000_123_456_789 + i, 1_700_000_000_123_456_789 + i * 10**9))
    return root


def tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every non-hidden-by-memdir file: bytes and mtime in ms."""
    out = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.name.startswith(".memdir"):
            out[rel] = (path.read_bytes(), (path.stat().st_mtime_ns + 500_000) // 1_000_000)
    return out


@pytest.fixture
def memdir_dir(tmp_path: Path) -> Path:
    return make_dir(tmp_path / "mem")


def test_distilled_name_is_the_one_dream_writes() -> None:
    assert DISTILLED_NAME == LOGS_DISTILLED_NAME


def test_export_then_restore_into_an_empty_dir_is_byte_identical(
    memdir_dir: Path, tmp_path: Path
) -> None:
    bundle = export_bundle(memdir_dir, tmp_path / "b.tar.gz", now=NOW)
    assert sorted(f.path for f in bundle.manifest.files) == sorted(FILES)
    result = restore_bundle(tmp_path / "b.tar.gz", tmp_path / "fresh", False)
    assert sorted(result.written) == sorted(FILES)
    assert (result.skipped, result.conflicting) == ((), ())
    assert tree(tmp_path / "fresh") == tree(memdir_dir)
    assert (tmp_path / "b.tar.gz").stat().st_mode & 0o777 == 0o600


def test_the_same_dir_gives_the_same_bytes_even_after_a_round_trip(
    memdir_dir: Path, tmp_path: Path
) -> None:
    first = export_bundle(memdir_dir, tmp_path / "1.tar.gz", now=NOW)
    second = export_bundle(memdir_dir, tmp_path / "2.tar.gz", now=NOW)
    restore_bundle(tmp_path / "1.tar.gz", tmp_path / "fresh", False)
    third = export_bundle(tmp_path / "fresh", tmp_path / "3.tar.gz", now=NOW)
    data = [(tmp_path / f"{i}.tar.gz").read_bytes() for i in (1, 2, 3)]
    assert data[0] == data[1] == data[2]
    assert first.archive_sha256 == second.archive_sha256 == third.archive_sha256


def test_a_changed_byte_changes_the_bundle(memdir_dir: Path, tmp_path: Path) -> None:
    before = export_bundle(memdir_dir, tmp_path / "1.tar.gz", now=NOW).archive_sha256
    (memdir_dir / "q2.md").write_bytes(FILES["q2.md"] + b"!")
    assert export_bundle(memdir_dir, tmp_path / "2.tar.gz", now=NOW).archive_sha256 != before


def test_the_manifest_lists_checksums_sizes_and_versions(memdir_dir: Path, tmp_path: Path) -> None:
    export_bundle(memdir_dir, tmp_path / "b.tar.gz", now=NOW)
    with tarfile.open(tmp_path / "b.tar.gz") as tf:
        names = tf.getnames()
        member = tf.extractfile("manifest.json")
        assert member is not None
        manifest = json.loads(member.read())
    assert names[0] == "manifest.json" and names[1:] == sorted(names[1:])
    assert manifest["format_version"] == BUNDLE_FORMAT_VERSION
    assert manifest["exported_at"] == "2026-12-02T07:00:00Z" and manifest["scope"] == "all"
    entry = next(f for f in manifest["files"] if f["path"] == "q2.md")
    assert entry["sha256"] == hashlib.sha256(FILES["q2.md"]).hexdigest()
    assert entry["size"] == len(FILES["q2.md"])


def test_what_is_not_canonical_stays_and_what_is_odd_is_reported(
    memdir_dir: Path, tmp_path: Path
) -> None:
    (memdir_dir / ".memdir.lock").write_bytes(b"")
    (memdir_dir / ".git").mkdir()
    (memdir_dir / ".git" / "config").write_bytes(b"[core]")
    (memdir_dir / ".note.md.1-abcdef01.tmp").write_bytes(b"temp")
    (memdir_dir / "diagram.png").write_bytes(b"\x89PNG")
    (memdir_dir / "link.md").symlink_to(memdir_dir / "q2.md")
    files, left_out = select_files(memdir_dir)
    assert sorted(files) == sorted(FILES)
    assert [p for p, _ in left_out] == ["diagram.png", "link.md"]


@pytest.mark.parametrize(
    ("scope", "team"), [("private", False), ("team", True)], ids=["private", "team"]
)
def test_scope_private_or_team(memdir_dir: Path, tmp_path: Path, scope: str, team: bool) -> None:
    result = export_bundle(memdir_dir, tmp_path / "b.tar.gz", scope=scope, now=NOW)  # type: ignore[arg-type]
    paths = {f.path for f in result.manifest.files}
    assert paths == {p for p in FILES if p.startswith("team/") == team}


def test_an_existing_bundle_is_not_replaced_without_overwrite(
    memdir_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "b.tar.gz"
    out.write_bytes(b"mine")
    with pytest.raises(BundleError, match="already exists"):
        export_bundle(memdir_dir, out, now=NOW)
    assert out.read_bytes() == b"mine"
    export_bundle(memdir_dir, out, now=NOW, overwrite=True)
    assert read_bundle(out)[0].files


def test_a_dry_run_writes_nothing_not_even_the_dir(memdir_dir: Path, tmp_path: Path) -> None:
    export_bundle(memdir_dir, tmp_path / "b.tar.gz", now=NOW)
    result = restore_bundle(tmp_path / "b.tar.gz", tmp_path / "fresh", True)
    assert sorted(result.written) == sorted(FILES) and result.dry_run
    assert not (tmp_path / "fresh").exists()


def test_a_non_empty_dir_keeps_its_files_and_a_rerun_changes_nothing(
    memdir_dir: Path, tmp_path: Path
) -> None:
    export_bundle(memdir_dir, tmp_path / "b.tar.gz", now=NOW)
    target = make_dir(tmp_path / "target", {"q2.md": FILES["q2.md"], "MEMORY.md": b"- mine\n"})
    (target / "mine.md").write_bytes(b"my own memory")
    result = restore_bundle(tmp_path / "b.tar.gz", target, False)
    assert result.skipped == ("q2.md",)
    assert result.conflicting == ("MEMORY.md",)
    assert "different" in result.reasons["MEMORY.md"]
    assert (target / "MEMORY.md").read_bytes() == b"- mine\n"
    assert (target / "mine.md").read_bytes() == b"my own memory"
    assert set(result.written) == set(FILES) - {"q2.md", "MEMORY.md"}
    before = tree(target)
    again = restore_bundle(tmp_path / "b.tar.gz", target, False)
    assert again.written == () and again.conflicting == ("MEMORY.md",)
    assert tree(target) == before


def test_a_symlinked_folder_in_the_target_is_not_written_through(
    memdir_dir: Path, tmp_path: Path
) -> None:
    export_bundle(memdir_dir, tmp_path / "b.tar.gz", now=NOW)
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    (target / "team").symlink_to(outside)
    (target / "deep").write_bytes(b"a file where the bundle has a folder")
    result = restore_bundle(tmp_path / "b.tar.gz", target, False)
    assert "symbolic link" in result.reasons["team/squash.md"]
    assert "is a file" in result.reasons["deep/er/nested.md"]
    assert list(outside.iterdir()) == []


# -- hostile bundles: each is refused with one line, and nothing is written -------------------


def _manifest(files: dict[str, bytes], **over: object) -> bytes:
    data: dict[str, object] = {
        "format": "memdir-bundle",
        "format_version": 1,
        "memdir_version": "0",
        "exported_at": "2026-12-02T07:00:00Z",
        "scope": "all",
        "files": [
            {"path": p, "size": len(d), "sha256": hashlib.sha256(d).hexdigest(), "mtime_ms": 0}
            for p, d in files.items()
        ],
    }
    data.update(over)
    return json.dumps(data).encode()


def _tar(
    members: list[tarfile.TarInfo | tuple[str, bytes]], *, fmt: int = tarfile.PAX_FORMAT
) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as tf:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tf.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                tf.addfile(info, io.BytesIO(member[1]))
    return gzip.compress(raw.getvalue())


def _special(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


GOOD = {"a.md": b"hello"}
HOSTILE: dict[str, Callable[[], bytes]] = {
    "parent traversal": lambda: _tar(
        [("manifest.json", _manifest({"../x.md": b"x"})), ("memory/../x.md", b"x")]
    ),
    "traversal in the member only": lambda: _tar(
        [("manifest.json", _manifest(GOOD)), ("memory/a.md", b"hello"), ("memory/../../x.md", b"x")]
    ),
    "absolute name": lambda: _tar([("manifest.json", _manifest(GOOD)), ("/etc/x.md", b"x")]),
    "absolute inside the prefix": lambda: _tar(
        [("manifest.json", _manifest(GOOD)), ("memory//etc/x.md", b"x")]
    ),
    "outside the memory/ prefix": lambda: _tar(
        [("manifest.json", _manifest(GOOD)), ("other/a.md", b"hello")]
    ),
    "symlink member": lambda: _tar(
        [
            ("manifest.json", _manifest(GOOD)),
            _special("memory/a.md", tarfile.SYMTYPE, "/etc/passwd"),
        ]
    ),
    "hardlink member": lambda: _tar(
        [
            ("manifest.json", _manifest(GOOD)),
            _special("memory/a.md", tarfile.LNKTYPE, "/etc/passwd"),
        ]
    ),
    "character device": lambda: _tar(
        [("manifest.json", _manifest(GOOD)), _special("memory/a.md", tarfile.CHRTYPE)]
    ),
    "FIFO": lambda: _tar(
        [("manifest.json", _manifest(GOOD)), _special("memory/a.md", tarfile.FIFOTYPE)]
    ),
    "directory member": lambda: _tar(
        [("manifest.json", _manifest(GOOD)), _special("memory/d", tarfile.DIRTYPE)]
    ),
    "non-UTF-8 name": lambda: _tar(
        [("manifest.json", _manifest(GOOD)), ("memory/a\udcff.md", b"x")], fmt=tarfile.GNU_FORMAT
    ),
    "NUL in a manifest path": lambda: _tar(
        [("manifest.json", _manifest({"a\x00.md": b"x"})), ("memory/a.md", b"x")]
    ),
    "control character in a name": lambda: _tar(
        [("manifest.json", _manifest({"a\n.md": b"x"})), ("memory/a\n.md", b"x")]
    ),
    "hidden path": lambda: _tar(
        [
            ("manifest.json", _manifest({".git/hooks/pre-commit": b"x"})),
            ("memory/.git/hooks/pre-commit", b"x"),
        ]
    ),
    "checksum mismatch": lambda: _tar(
        [("manifest.json", _manifest(GOOD)), ("memory/a.md", b"HELLO")]
    ),
    "size mismatch": lambda: _tar([("manifest.json", _manifest(GOOD)), ("memory/a.md", b"hello!")]),
    "a file missing": lambda: _tar(
        [("manifest.json", _manifest({**GOOD, "b.md": b"b"})), ("memory/a.md", b"hello")]
    ),
    "an extra file": lambda: _tar(
        [("manifest.json", _manifest(GOOD)), ("memory/a.md", b"hello"), ("memory/b.md", b"b")]
    ),
    "a member twice": lambda: _tar(
        [("manifest.json", _manifest(GOOD)), ("memory/a.md", b"hello"), ("memory/a.md", b"hello")]
    ),
    "newer format": lambda: _tar(
        [
            ("manifest.json", _manifest(GOOD, format_version=BUNDLE_FORMAT_VERSION + 1)),
            ("memory/a.md", b"hello"),
        ]
    ),
    "not a memdir manifest": lambda: _tar([("manifest.json", b'{"format": "zip"}')]),
    "manifest not first": lambda: _tar(
        [("memory/a.md", b"hello"), ("manifest.json", _manifest(GOOD))]
    ),
    "manifest not JSON": lambda: _tar([("manifest.json", b"{nope")]),
    "manifest nested 200k deep": lambda: _tar([("manifest.json", b"[" * 30_000 + b"]" * 30_000)]),
    "bad sha256 in the manifest": lambda: _tar(
        [
            ("manifest.json", _manifest(GOOD).replace(b'"sha256": "', b'"sha256": "zz')),
            ("memory/a.md", b"hello"),
        ]
    ),
    "empty archive": lambda: _tar([]),
    "not gzip": lambda: b"PK\x03\x04 a zip file",
    "truncated gzip": lambda: _tar([("manifest.json", _manifest(GOOD)), ("memory/a.md", b"hello")])[
        :40
    ],
}
LIMITS = Limits(max_file_bytes=64 * 1024, max_total_bytes=256 * 1024, max_files=20)
BOMBS: dict[str, Callable[[], bytes]] = {
    "one file over the per-file cap (a gzip bomb)": lambda: _tar(
        [("manifest.json", _manifest({"z.md": b""})), ("memory/z.md", bytes(50 * 1024 * 1024))]
    ),
    "files over the total cap": lambda: _tar(
        [
            ("manifest.json", _manifest({f"{i}.md": bytes(60 * 1024) for i in range(6)})),
            *((f"memory/{i}.md", bytes(60 * 1024)) for i in range(6)),
        ]
    ),
    "more files than the cap": lambda: _tar(
        [
            ("manifest.json", _manifest({f"{i}.md": b"" for i in range(30)})),
            *((f"memory/{i}.md", b"") for i in range(30)),
        ]
    ),
    "a pax header bomb": lambda: _tar([("manifest.json", _manifest(GOOD)), _pax_bomb()]),
}

EXPECTED = {
    "parent traversal": "contains '..'",
    "traversal in the member only": "contains '..'",
    "absolute name": "outside memory/",
    "absolute inside the prefix": "absolute path",
    "outside the memory/ prefix": "outside memory/",
    "symlink member": "symbolic link",
    "hardlink member": "hard link",
    "character device": "character device",
    "FIFO": "FIFO",
    "directory member": "directory",
    "non-UTF-8 name": "not UTF-8",
    "NUL in a manifest path": "NUL",
    "control character in a name": "control character",
    "hidden path": "hidden path",
    "checksum mismatch": "SHA-256",
    "size mismatch": "SHA-256",
    "a file missing": "missing",
    "an extra file": "not in its manifest",
    "a member twice": "twice",
    "newer format": "upgrade memdir",
    "not a memdir manifest": "not a memdir bundle",
    "manifest not first": "must start with manifest.json",
    "manifest not JSON": "not valid JSON",
    "manifest nested 200k deep": "nested too deeply",
    "bad sha256 in the manifest": "no valid sha256",
    "empty archive": "empty",
    "not gzip": "not a .tar.gz",
    "truncated gzip": "not a .tar.gz",
    "one file over the per-file cap (a gzip bomb)": "cap per file",
    "files over the total cap": "add up to more than",
    "more files than the cap": "more than 20 files",
    "a pax header bomb": "decompression bomb",
}


def _pax_bomb() -> tarfile.TarInfo:
    info = tarfile.TarInfo("memory/a.md")
    info.pax_headers = {"comment": "x" * (8 * 1024 * 1024)}
    return info


@pytest.mark.parametrize("name", [*HOSTILE, *BOMBS])
def test_a_hostile_bundle_is_refused_in_one_line_with_nothing_written(
    tmp_path: Path, name: str
) -> None:
    archive = tmp_path / "hostile.tar.gz"
    archive.write_bytes({**HOSTILE, **BOMBS}[name]())
    target = tmp_path / "target"
    for dry_run in (True, False):
        with pytest.raises(BundleError) as caught:
            restore_bundle(archive, target, dry_run, limits=LIMITS)
        message = str(caught.value)
        assert EXPECTED[name] in message
        assert "\n" not in message and len(message) < 300
    assert not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostile.tar.gz"]


def test_the_good_bundle_the_hostile_ones_are_built_from_restores(tmp_path: Path) -> None:
    """The table above fails for the reason it names, not because the builder is broken."""
    archive = tmp_path / "good.tar.gz"
    archive.write_bytes(_tar([("manifest.json", _manifest(GOOD)), ("memory/a.md", b"hello")]))
    result = restore_bundle(archive, tmp_path / "target", False, limits=LIMITS)
    assert result.written == ("a.md",)
    assert (tmp_path / "target" / "a.md").read_bytes() == b"hello"


def test_a_bundle_with_a_newer_format_says_to_upgrade(tmp_path: Path) -> None:
    archive = tmp_path / "new.tar.gz"
    archive.write_bytes(HOSTILE["newer format"]())
    with pytest.raises(BundleError, match="upgrade memdir"):
        restore_bundle(archive, tmp_path / "target", True)


def test_an_export_over_the_caps_leaves_files_out_and_says_so(tmp_path: Path) -> None:
    mem = make_dir(tmp_path / "mem", {"small.md": b"x", "big.md": bytes(70 * 1024)})
    result = export_bundle(mem, tmp_path / "b.tar.gz", now=NOW, limits=LIMITS)
    assert [f.path for f in result.manifest.files] == ["small.md"]
    assert result.left_out[0][0] == "big.md" and "cap" in result.left_out[0][1]


def test_a_missing_memory_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="no memory dir"):
        export_bundle(tmp_path / "nope", tmp_path / "b.tar.gz", now=NOW)
    assert not (tmp_path / "b.tar.gz").exists()


def test_a_restore_cut_short_leaves_whole_files_and_a_rerun_finishes(
    memdir_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir import atomic
    from memdir import bundle as bundle_module

    export_bundle(memdir_dir, tmp_path / "b.tar.gz", now=NOW)
    real_write = atomic.atomic_write
    calls = {"n": 0}

    def failing_write(path: Path, data: bytes, **kw: object) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        real_write(path, data, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(bundle_module, "atomic_write", failing_write)
    with pytest.raises(OSError):
        restore_bundle(tmp_path / "b.tar.gz", tmp_path / "fresh", False)
    partial = tree(tmp_path / "fresh")
    assert len(partial) < len(FILES)  # the failed one at least is missing
    assert all(FILES[rel] == data for rel, (data, _) in partial.items())  # no torn file
    monkeypatch.setattr(bundle_module, "atomic_write", real_write)
    result = restore_bundle(tmp_path / "b.tar.gz", tmp_path / "fresh", False)
    assert len(result.skipped) == len(partial) and len(result.written) == len(FILES) - len(partial)
    assert tree(tmp_path / "fresh") == tree(memdir_dir)


def test_names_a_bundle_could_not_carry_are_reported_at_export(tmp_path: Path) -> None:
    mem = make_dir(tmp_path / "mem", {"ok.md": b"x"})
    os.close(os.open(os.fsencode(mem) + b"/bad\xff.md", os.O_CREAT | os.O_WRONLY, 0o600))
    (mem / "line\nbreak.md").write_bytes(b"y")
    result = export_bundle(mem, tmp_path / "b.tar.gz", now=NOW)
    assert [f.path for f in result.manifest.files] == ["ok.md"]
    reasons = dict(result.left_out)
    assert "UTF-8" in reasons[os.fsdecode(b"bad\xff.md")]
    assert "control character" in reasons["line\nbreak.md"]


def test_a_huge_or_odd_archive_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    sparse = tmp_path / "huge.tar.gz"
    with open(sparse, "wb") as fh:
        fh.truncate(LIMITS.max_stream_bytes + 1)  # sparse: costs no disk, would cost memory
    with pytest.raises(BundleError, match="larger than a bundle may be"):
        restore_bundle(sparse, tmp_path / "target", True, limits=LIMITS)
    os.mkfifo(tmp_path / "fifo.tar.gz")
    with pytest.raises(BundleError, match="not a regular file"):
        restore_bundle(tmp_path / "fifo.tar.gz", tmp_path / "target", True)
    with pytest.raises(BundleError, match="no bundle at"):
        restore_bundle(tmp_path / "missing.tar.gz", tmp_path / "target", True)
    assert not (tmp_path / "target").exists()
