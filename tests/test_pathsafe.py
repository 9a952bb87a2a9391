from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.errors import UnsafePathError
from memdir.pathsafe import check_relative, relative_to_root, resolve_inside


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "../x.md",
        "a/../../x.md",
        "a/..",
        "/etc/passwd",
        "C:/x.md",
        "a\\b.md",
        "..\\x.md",
        "x\x00.md",
        "%2e%2e/x.md",
        "..%2fx.md",
        "%2e%2e%2fx.md",
        "\uff0e\uff0e\uff0fx.md",  # full-width ../
        ".",
        "./",
    ],
)
def test_bad_relative_names_are_refused(bad: str, tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError):
        resolve_inside(tmp_path, bad)


@pytest.mark.parametrize(
    ("name", "normal"),
    [
        ("a.md", "a.md"),
        ("./a/b.md", "a/b.md"),
        ("a//b.md", "a/b.md"),
        ("caf\u00e9.md", "caf\u00e9.md"),
    ],
)
def test_good_names_normalise(name: str, normal: str) -> None:
    assert check_relative(name) == normal


def test_symlink_escape_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="symlink"):
        resolve_inside(root, "link/x.md")
    assert not (outside / "x.md").exists()


def test_symlink_inside_root_is_fine(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    (root / "real").mkdir(parents=True)
    (root / "alias").symlink_to(root / "real")
    assert resolve_inside(root, "alias/x.md") == root / "alias" / "x.md"


def test_dangling_symlink_and_loop_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "dangling").symlink_to(tmp_path / "nowhere")
    (root / "loop").symlink_to(root / "loop")
    with pytest.raises(UnsafePathError):
        resolve_inside(root, "dangling")
    with pytest.raises(UnsafePathError):
        resolve_inside(root, "loop/x.md")


def test_relative_to_root(tmp_path: Path) -> None:
    assert relative_to_root(tmp_path, tmp_path / "a" / "b.md") == "a/b.md"
    with pytest.raises(UnsafePathError):
        relative_to_root(tmp_path, tmp_path.parent / "x.md")
    with pytest.raises(UnsafePathError):
        relative_to_root(tmp_path, tmp_path)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab./\\%2e\x00~:\uff0e\uff0f")), max_size=12))
def test_random_names_never_escape(tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    root = tmp_path_factory.getbasetemp() / "fuzzroot"
    root.mkdir(exist_ok=True)
    try:
        target = resolve_inside(root, name)
    except UnsafePathError:
        return
    real_root = os.path.realpath(root)
    assert os.path.normpath(target).startswith(real_root + os.sep)


def test_open_regular_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    from memdir.errors import UnreadableFileError
    from memdir.pathsafe import open_regular

    fifo = tmp_path / "MEMORY.md"
    os.mkfifo(fifo)
    with pytest.raises(UnreadableFileError, match="not a regular file"):
        open_regular(fifo)


def test_open_regular_reads_a_file_and_refuses_a_link_when_asked(tmp_path: Path) -> None:
    from memdir.errors import UnreadableFileError
    from memdir.pathsafe import open_regular

    target = tmp_path / "a.md"
    target.write_text("hi", encoding="utf-8")
    fd = open_regular(target)
    try:
        assert os.read(fd, 10) == b"hi"
    finally:
        os.close(fd)
    link = tmp_path / "link.md"
    link.symlink_to(target)
    os.close(open_regular(link))
    with pytest.raises(UnreadableFileError, match="symlink"):
        open_regular(link, follow_symlinks=False)
