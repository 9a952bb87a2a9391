"""Slug, override validation, git roots (real worktrees) and the resolved layout."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.config import load_settings
from memdir.errors import ConfigError, UnsafePathError
from memdir.paths import (
    MAX_SANITIZED_LENGTH,
    canonical_git_root,
    djb2_hash,
    find_canonical_git_root,
    find_git_root,
    find_project_dir,
    is_memory_path,
    resolve_paths,
    sanitize_path,
    validate_memory_path,
)

# Expected values below were computed independently with the reference's JavaScript algorithm
# (node: h = ((h << 5) - h + s.charCodeAt(i)) | 0; Math.abs(h).toString(36)) or by hand.
LONG_ASCII = "a" * 250
LONG_UNICODE = "/x/" + "déjà-😀" * 40


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("a", 97), ("ab", 3105), ("/home/user/project", -1588831306)],
)
def test_djb2_matches_reference(text: str, expected: int) -> None:
    assert djb2_hash(text) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("/home/user/project", "-home-user-project"),
        ("C:\\Users\\me\\repo", "C--Users-me-repo"),
        ("/tmp/café", "-tmp-caf-"),
        ("/tmp/😀", "-tmp---"),  # an astral character is two UTF-16 units, so two dashes
        (LONG_ASCII, "a" * 200 + "-wm9qhs"),
        (LONG_UNICODE, "-x-" + "d-j----" * 28 + "d" + "-my0a06"),
    ],
)
def test_sanitize_path(name: str, expected: str) -> None:
    assert sanitize_path(name) == expected


def test_sanitize_long_names_with_shared_prefix_stay_distinct() -> None:
    a, b = sanitize_path("/p/" + "x" * 300 + "1"), sanitize_path("/p/" + "x" * 300 + "2")
    assert a != b
    assert a[:MAX_SANITIZED_LENGTH] == b[:MAX_SANITIZED_LENGTH]


def test_find_project_dir_falls_back_to_prefix_match(tmp_path: Path) -> None:
    slug = sanitize_path(LONG_ASCII)
    assert find_project_dir(tmp_path, slug) == tmp_path / slug  # nothing exists yet
    other = tmp_path / (slug[:MAX_SANITIZED_LENGTH] + "-otherhash")
    other.mkdir()
    assert find_project_dir(tmp_path, slug) == other
    (tmp_path / slug).mkdir()
    assert find_project_dir(tmp_path, slug) == tmp_path / slug
    short = sanitize_path("/short")
    (tmp_path / (short + "-x")).mkdir()
    assert find_project_dir(tmp_path, short) == tmp_path / short  # no fallback for short slugs


@pytest.mark.parametrize(
    ("raw", "home", "expected"),
    [
        ("/srv/memory", None, "/srv/memory"),
        ("/srv/memory///", None, "/srv/memory"),
        ("/srv/a/../memory", None, "/srv/memory"),
        ("/abc", None, "/abc"),
        ("~/notes/mem", "/home/u", "/home/u/notes/mem"),
        ("~\\notes", "/home/u", "/home/u/notes"),
        ("/cafe\u0301", None, "/caf\u00e9"),  # NFC
    ],
)
def test_validate_memory_path_accepts(raw: str, home: str | None, expected: str) -> None:
    result = validate_memory_path(raw, source="test", home=Path(home) if home else None)
    assert result == Path(expected)


@pytest.mark.parametrize(
    ("raw", "home", "reason"),
    [
        ("relative/dir", None, "absolute"),
        ("./mem", None, "absolute"),
        ("/a", None, "too short"),
        ("/", None, "absolute"),
        ("C:", None, "drive"),
        ("C:\\", None, "drive"),
        ("\\\\server\\share", None, "UNC"),
        ("//server/share", None, "UNC"),
        ("/tmp/a\x00b", None, "NUL"),
        ("~", "/home/u", "absolute"),
        ("~/", "/home/u", "'~' alone"),
        ("~/..", "/home/u", "'~' alone"),
        ("~/.", "/home/u", "'~' alone"),
        ("~/mem", None, "absolute"),  # env and flag values get no ~ expansion
    ],
)
def test_validate_memory_path_rejects(raw: str, home: str | None, reason: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate_memory_path(raw, source="env MEMDIR_DIR", home=Path(home) if home else None)
    assert reason in str(info.value)
    assert "env MEMDIR_DIR" in str(info.value)


def test_validate_memory_path_empty_is_unset() -> None:
    assert validate_memory_path("", source="x") is None


def _git(*args: str, cwd: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    main = tmp_path / "main"
    main.mkdir()
    _git("init", "-q", "-b", "main", cwd=main)
    (main / "f.txt").write_text("x")
    _git("add", "f.txt", cwd=main)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init", cwd=main)
    return main


def test_git_root_walks_up(repo: Path) -> None:
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    assert find_git_root(deep) == repo
    assert canonical_git_root(repo) == repo


def test_no_git_root(tmp_path: Path) -> None:
    assert find_git_root(tmp_path) is None
    assert find_canonical_git_root(tmp_path) is None


def test_worktrees_share_the_main_root(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    _git("worktree", "add", "-q", str(wt), "-b", "feature", cwd=repo)
    assert (wt / ".git").is_file()
    assert find_git_root(wt / ".") == wt
    assert canonical_git_root(wt) == repo
    (wt / "sub").mkdir()
    assert find_canonical_git_root(wt / "sub") == repo


def test_bare_repo_worktree_returns_common_dir(tmp_path: Path, repo: Path) -> None:
    bare = tmp_path / "bare.git"
    _git("clone", "-q", "--bare", str(repo), str(bare), cwd=tmp_path)
    wt = tmp_path / "bare-wt"
    _git("worktree", "add", "-q", str(wt), "main", cwd=bare)
    assert canonical_git_root(wt) == bare


def test_forged_git_file_does_not_borrow_another_repo(repo: Path, tmp_path: Path) -> None:
    real_wt = tmp_path / "wt"
    _git("worktree", "add", "-q", str(real_wt), "-b", "w", cwd=repo)
    forged = tmp_path / "forged"
    forged.mkdir()
    # Points at a genuine worktree gitdir, but that gitdir's back-link names real_wt, not us.
    (forged / ".git").write_text((real_wt / ".git").read_text())
    assert canonical_git_root(forged) == forged


def test_gitdir_outside_worktrees_dir_is_not_trusted(repo: Path, tmp_path: Path) -> None:
    fake_gitdir = tmp_path / "elsewhere" / "wt1"
    fake_gitdir.mkdir(parents=True)
    (fake_gitdir / "commondir").write_text(str(repo / ".git"))
    checkout = tmp_path / "co"
    checkout.mkdir()
    (fake_gitdir / "gitdir").write_text(str(checkout / ".git"))
    (checkout / ".git").write_text(f"gitdir: {fake_gitdir}\n")
    assert canonical_git_root(checkout) == checkout


def test_submodule_keeps_its_own_root(tmp_path: Path) -> None:
    sub_gitdir = tmp_path / "super" / ".git" / "modules" / "sub"
    sub_gitdir.mkdir(parents=True)  # a submodule gitdir has no commondir file
    sub = tmp_path / "super" / "sub"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/sub\n")
    assert canonical_git_root(sub) == sub


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        ("/m/mem/a.md", True),
        ("/m/mem/sub/../b.md", True),
        ("/m/mem/../other/a.md", False),
        ("/m/memory2/a.md", False),
        ("/m/mem", False),
        ("relative/a.md", False),
    ],
)
def test_is_memory_path(path: str, inside: bool) -> None:
    assert is_memory_path(path, Path("/m/mem")) is inside


def test_resolve_paths_memdir_layout(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home2"
    sub = repo / "pkg"
    sub.mkdir()
    settings = load_settings(
        {"HOME": str(home)},
        cwd=sub,
        flag_settings=None,
        claude_mode=False,
        memory_dir_flag=None,
        policy_dir=home / "none",
    )
    paths = resolve_paths(settings, cwd=sub)
    slug = sanitize_path(str(repo.resolve()))
    memory = home / ".memdir" / "projects" / slug / "memory"
    assert paths.project_root == repo.resolve()
    assert paths.memory_dir == memory
    assert paths.entrypoint == memory / "MEMORY.md"
    assert paths.team_dir == memory / "team"
    assert paths.team_entrypoint == memory / "team" / "MEMORY.md"
    assert paths.daily_log(dt.date(2026, 3, 7)) == memory / "logs/2026/03/2026-03-07.md"
    transcripts = home / ".memdir" / "projects" / sanitize_path(str(sub.resolve()))
    assert paths.transcripts_dir == transcripts
    assert paths.transcript_path("abc-123") == transcripts / "abc-123.jsonl"
    assert paths.session_memory_path("s1") == transcripts / "s1/session-memory/summary.md"
    assert paths.subagent_transcript_path("s1", "x") == transcripts / "s1/subagents/agent-x.jsonl"
    assert not paths.cache_dir.is_relative_to(paths.memory_dir)
    assert paths.cache_dir.is_relative_to(home / ".memdir" / "cache")
    assert paths.agent_memory_dir("user", "code:reviewer") == (
        home / ".memdir" / "agent-memory" / "code-reviewer"
    )
    assert paths.agent_memory_dir("project", "r") == sub.resolve() / ".memdir/agent-memory/r"
    assert paths.agent_memory_dir("local", "r") == sub.resolve() / ".memdir/agent-memory-local/r"
    assert paths.decided_by["memory_dir"].startswith("default")
    assert set(paths.as_dict()) >= {"memory_dir", "cache_dir", "transcripts_dir"}


def test_resolve_paths_claude_layout_and_worktree_sharing(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home2"
    wt = tmp_path / "wt"
    _git("worktree", "add", "-q", str(wt), "-b", "f2", cwd=repo)
    env = {"HOME": str(home), "MEMDIR_HOME": str(tmp_path / "md")}
    s_main, s_wt = (
        load_settings(
            env,
            cwd=cwd,
            flag_settings=None,
            claude_mode=True,
            memory_dir_flag=None,
            policy_dir=home / "x",
        )
        for cwd in (repo, wt)
    )
    p_main, p_wt = resolve_paths(s_main, cwd=repo), resolve_paths(s_wt, cwd=wt)
    slug = sanitize_path(str(repo.resolve()))
    assert p_main.memory_dir == p_wt.memory_dir == home / ".claude/projects" / slug / "memory"
    assert p_main.transcripts_dir != p_wt.transcripts_dir  # transcripts follow the raw cwd
    assert p_wt.decided_by["project_root"].startswith("main worktree")
    assert p_main.cache_dir.is_relative_to(tmp_path / "md" / "cache")
    assert p_main.agent_memory_dir("project", "t") == repo.resolve() / ".claude/agent-memory/t"


def test_resolve_paths_remote_memory_base(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "CLAUDE_CODE_REMOTE_MEMORY_DIR": str(tmp_path / "remote")}
    settings = load_settings(
        env, cwd=tmp_path, flag_settings=None, claude_mode=True, memory_dir_flag=None
    )
    paths = resolve_paths(settings, cwd=tmp_path)
    assert paths.memory_dir.is_relative_to(tmp_path / "remote" / "projects")
    assert paths.projects_dir == tmp_path / ".claude" / "projects"  # transcripts stay home
    assert paths.agent_memory_dir("user", "a") == tmp_path / "remote" / "agent-memory" / "a"


def test_override_replaces_memory_dir(tmp_path: Path) -> None:
    target = tmp_path / "chosen"
    settings = load_settings(
        {"HOME": str(tmp_path), "MEMDIR_DIR": str(target)},
        cwd=tmp_path,
        flag_settings=None,
        claude_mode=False,
        memory_dir_flag=None,
    )
    paths = resolve_paths(settings, cwd=tmp_path)
    assert paths.memory_dir == target
    assert paths.decided_by["memory_dir"] == "env MEMDIR_DIR"


@pytest.mark.parametrize("bad", ["../x", "a/b", "", "..", "x" * 200, "a\x00"])
def test_session_and_agent_ids_are_checked(tmp_path: Path, bad: str) -> None:
    settings = load_settings(
        {"HOME": str(tmp_path)},
        cwd=tmp_path,
        flag_settings=None,
        claude_mode=False,
        memory_dir_flag=None,
    )
    paths = resolve_paths(settings, cwd=tmp_path)
    with pytest.raises(UnsafePathError):
        paths.transcript_path(bad)
    with pytest.raises(UnsafePathError):
        paths.agent_memory_dir("user", bad)


def test_unknown_agent_scope(tmp_path: Path) -> None:
    settings = load_settings(
        {"HOME": str(tmp_path)},
        cwd=tmp_path,
        flag_settings=None,
        claude_mode=False,
        memory_dir_flag=None,
    )
    with pytest.raises(ConfigError):
        resolve_paths(settings, cwd=tmp_path).agent_memory_dir("team", "a")  # type: ignore[arg-type]


@given(st.text(max_size=400))
def test_sanitize_path_properties(name: str) -> None:
    slug = sanitize_path(name)
    assert re.fullmatch(r"[A-Za-z0-9-]*", slug)
    assert slug == sanitize_path(name)
    units = len(name.encode("utf-16-le", "surrogatepass")) // 2
    if units <= MAX_SANITIZED_LENGTH:
        assert len(slug) == units
    else:
        assert len(slug) <= MAX_SANITIZED_LENGTH + 1 + 7  # base-36 of 2**31 has 6 digits
        assert slug[MAX_SANITIZED_LENGTH] == "-"


@given(st.text(alphabet="/\\.~:aC\x00 ", max_size=12))
def test_validate_memory_path_properties(raw: str) -> None:
    try:
        result = validate_memory_path(raw, source="prop", home=Path("/home/u"))
    except ConfigError:
        return
    if result is None:
        assert raw == ""
        return
    text = str(result)
    assert text.startswith("/") and not text.startswith("//")
    assert len(text) >= 3 and "\x00" not in text
    assert text == os.path.normpath(text)


@given(st.lists(st.text(alphabet="ab.-_", min_size=1, max_size=5), min_size=1, max_size=4))
def test_is_memory_path_never_escapes(segments: list[str]) -> None:
    candidate = "/m/mem/" + "/".join(segments)
    inside = is_memory_path(candidate, Path("/m/mem"))
    normalized = os.path.normpath(candidate)
    assert inside is normalized.startswith("/m/mem/")


def test_dangling_git_symlink_is_not_a_repo(tmp_path: Path) -> None:
    (tmp_path / ".git").symlink_to(tmp_path / "missing")
    assert find_git_root(tmp_path) is None
    (tmp_path / "real").mkdir()
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / ".git").symlink_to(tmp_path / "real")
    assert find_git_root(tmp_path / "proj") == tmp_path / "proj"
