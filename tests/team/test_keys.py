"""Team key validation: known traversal payloads, symlink tricks, and random keys never escape."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.errors import PathTraversalError
from memdir.team.keys import (
    check_team_path,
    is_real_path_within_team_dir,
    realpath_deepest_existing,
    sanitize_key,
    validate_team_key,
)

PAYLOADS = [
    ("dotdot", "../x.md"),
    ("nested-dotdot", "a/../../x.md"),
    ("bare-dotdot", ".."),
    ("url-encoded-all", "%2e%2e%2fx.md"),
    ("url-encoded-slash", "..%2fx.md"),
    ("url-encoded-upper", "%2E%2E/x.md"),
    ("url-encoded-dots-mid", "a/%2e%2e/b.md"),
    ("url-encoded-root", "%2fetc%2fpasswd"),
    ("url-encoded-backslash", "..%5cx.md"),
    ("fullwidth", "．．／x.md"),
    ("fullwidth-slash-only", "a／b.md"),
    ("two-dot-leader", "‥/x.md"),
    ("small-full-stops", "﹒﹒/x.md"),
    ("backslash-dotdot", "\\..\\x.md"),
    ("backslash", "a\\b.md"),
    ("absolute", "/etc/passwd"),
    ("nul", "x\x00.md"),
    ("nul-after-dir", "a/\x00"),
    ("empty", ""),
    ("blank", "   "),
    ("root-itself", "."),
    ("sibling-prefix", "../team-evil/x.md"),
]

VALID = [
    ("a.md", "a.md"),
    ("sub/dir/x.md", "sub/dir/x.md"),
    ("./a//b.md", "a/b.md"),
    ("a..b.md", "a..b.md"),
    ("100%.md", "100%.md"),  # a malformed escape is taken raw
    ("%41.md", "%41.md"),  # decodes to something harmless: kept as written
    ("notes-ü.md", "notes-ü.md"),
]


@pytest.fixture
def team(tmp_path: Path) -> Path:
    d = tmp_path / "memory" / "team"
    d.mkdir(parents=True)
    return d


@pytest.mark.parametrize(("name", "key"), PAYLOADS, ids=[p[0] for p in PAYLOADS])
def test_traversal_payloads_are_rejected(team: Path, name: str, key: str) -> None:
    with pytest.raises(PathTraversalError):
        sanitize_key(key)
    with pytest.raises(PathTraversalError):
        validate_team_key(team, key)


@pytest.mark.parametrize(("key", "normal"), VALID)
def test_valid_keys_resolve_inside(team: Path, key: str, normal: str) -> None:
    assert sanitize_key(key) == normal
    assert validate_team_key(team, key) == team / normal


def test_symlink_to_outside_is_rejected(team: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (team / "link").symlink_to(outside)
    with pytest.raises(PathTraversalError, match="symlink"):
        validate_team_key(team, "link/x.md")
    (team / "file-link.md").symlink_to(tmp_path / "outside" / "secret.md")
    (outside / "secret.md").write_text("x")
    with pytest.raises(PathTraversalError):
        validate_team_key(team, "file-link.md")


def test_symlink_to_sibling_with_team_prefix_is_rejected(team: Path) -> None:
    evil = team.parent / "team-evil"
    evil.mkdir()
    (team / "hop").symlink_to(evil)
    with pytest.raises(PathTraversalError):
        validate_team_key(team, "hop/x.md")
    assert not is_real_path_within_team_dir(team, evil / "x.md")
    with pytest.raises(PathTraversalError):
        check_team_path(team, evil / "x.md")


def test_dangling_symlink_is_rejected(team: Path) -> None:
    (team / "dangling").symlink_to(team / "nowhere")
    for key in ("dangling", "dangling/x.md"):
        with pytest.raises(PathTraversalError, match="dangling"):
            validate_team_key(team, key)


def test_symlink_loop_is_rejected(team: Path) -> None:
    (team / "a").symlink_to(team / "b")
    (team / "b").symlink_to(team / "a")
    with pytest.raises(PathTraversalError, match="loop"):
        validate_team_key(team, "a/x.md")


def test_symlink_inside_the_team_dir_is_allowed(team: Path) -> None:
    (team / "real").mkdir()
    (team / "alias").symlink_to(team / "real")
    assert validate_team_key(team, "alias/x.md") == team / "alias" / "x.md"


def test_team_dir_behind_a_symlink_still_works(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere" / "team"
    real.mkdir(parents=True)
    link = tmp_path / "team"
    link.symlink_to(real)
    assert validate_team_key(link, "x.md") == link / "x.md"
    assert is_real_path_within_team_dir(link, real / "x.md")


def test_missing_team_dir_accepts_lexically_valid_keys(tmp_path: Path) -> None:
    team = tmp_path / "not-yet" / "team"
    assert validate_team_key(team, "a/b.md") == team / "a" / "b.md"
    assert is_real_path_within_team_dir(team, tmp_path / "anything")


def test_is_real_path_within_team_dir(team: Path, tmp_path: Path) -> None:
    real = Path(os.path.realpath(team))
    assert is_real_path_within_team_dir(team, real)
    assert is_real_path_within_team_dir(team, real / "a" / "b.md")
    assert not is_real_path_within_team_dir(team, real.parent / "team-evil" / "a.md")
    assert not is_real_path_within_team_dir(team, real.parent)
    dangling_team = tmp_path / "dangling-team"
    dangling_team.symlink_to(tmp_path / "gone")
    assert not is_real_path_within_team_dir(dangling_team, tmp_path / "gone" / "x.md")


def test_realpath_keeps_walking_past_enotdir_and_long_names(team: Path) -> None:
    (team / "file.md").write_text("x")
    real = Path(os.path.realpath(team))
    assert realpath_deepest_existing(team / "file.md" / "child") == real / "file.md" / "child"
    long = "n" * 300
    assert realpath_deepest_existing(team / long / "x") == real / long / "x"


@pytest.mark.parametrize(
    ("given", "ok"),
    [("a.md", True), ("sub/a.md", True), ("../a.md", False), ("/etc/x", False)],
)
def test_check_team_path_accepts_relative_and_absolute(team: Path, given: str, ok: bool) -> None:
    for candidate in (Path(given), team / given):
        if ok:
            assert check_team_path(team, candidate) == team / given
        else:
            with pytest.raises(PathTraversalError):
                check_team_path(team, candidate)
    with pytest.raises(PathTraversalError):
        check_team_path(team, team)


_KEY_CHARS = st.sampled_from([*"ab./\\%2eEfF5c\x00．／‥﹒~ ", "%2e", "%2f", "..", "/"])


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_KEY_CHARS, max_size=12).map("".join))
def test_random_keys_never_escape(team: Path, key: str) -> None:
    try:
        target = validate_team_key(team, key)
    except PathTraversalError:
        return
    norm = Path(os.path.normpath(target))
    assert norm != team
    assert norm.is_relative_to(team)
    assert Path(os.path.realpath(target)).is_relative_to(os.path.realpath(team))
    assert "\x00" not in str(target)
