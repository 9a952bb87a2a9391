"""Settings precedence, the enable chain, directory overrides and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memdir.config import Settings, load_settings
from memdir.errors import ConfigError

LEVEL_FILES = {
    # memdir mode: level -> path relative to the test's tmp root
    "user": "home/.memdir/settings.json",
    "project": "proj/.memdir/settings.json",
    "local": "proj/.memdir/settings.local.json",
    "flag": "flag.json",
    "policy": "policy/managed-settings.json",
}
CLAUDE_LEVEL_FILES = {
    "user": "home/.claude/settings.json",
    "project": "proj/.claude/settings.json",
    "local": "proj/.claude/settings.local.json",
    "flag": "flag.json",
    "policy": "policy/managed-settings.json",
}


class World:
    """A fake machine under tmp_path: a home, a project, a flag file and a policy dir."""

    def __init__(self, root: Path):
        self.root = root
        self.home = root / "home"
        self.project = root / "proj"
        self.home.mkdir(exist_ok=True)
        self.project.mkdir()
        self.env: dict[str, str] = {"HOME": str(self.home)}
        self.flag: Path | None = None

    def write(self, rel: str, data: Any) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data if isinstance(data, str) else json.dumps(data))
        if rel == "flag.json":
            self.flag = path
        return path

    def load(self, *, claude: bool = False, dir_flag: Path | None = None, **env: str) -> Settings:
        return self.load_env(env, claude=claude, dir_flag=dir_flag)

    def load_env(
        self, env: dict[str, str], *, claude: bool = False, dir_flag: Path | None = None
    ) -> Settings:
        return load_settings(
            {**self.env, **env},
            cwd=self.project,
            flag_settings=self.flag,
            claude_mode=claude,
            memory_dir_flag=dir_flag,
            policy_dir=self.root / "policy",
        )


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_defaults(world: World) -> None:
    s = world.load()
    assert s.home == world.home / ".memdir"
    assert s.memory_base == s.home == s.memdir_home
    assert s.auto_memory_enabled is True
    assert s.auto_dream_enabled is False
    assert s.team_memory_enabled is False
    assert s.daily_log_mode is False
    assert s.memory_dir_override is None
    assert s.model is None
    assert s.sources["auto_memory_enabled"] == "default"
    assert [f.level for f in s.files] == ["user", "project", "local", "policy"]
    assert not any(f.loaded for f in s.files)


@pytest.mark.parametrize(
    "levels",
    [
        ("user",),
        ("user", "project"),
        ("user", "project", "local"),
        ("user", "project", "local", "flag"),
        ("user", "project", "local", "flag", "policy"),
        ("project", "policy"),
        ("user", "flag"),
        ("local", "user"),
    ],
)
@pytest.mark.parametrize("claude", [False, True])
def test_precedence_highest_level_wins(world: World, levels: tuple[str, ...], claude: bool) -> None:
    order = ["user", "project", "local", "flag", "policy"]
    files = CLAUDE_LEVEL_FILES if claude else LEVEL_FILES
    for i, level in enumerate(levels):
        # Alternate values so each level disagrees with the one below it.
        world.write(files[level], {"autoMemoryEnabled": i % 2 == 0})
    winner = max(levels, key=order.index)
    s = world.load(claude=claude)
    assert s.auto_memory_enabled is (levels.index(winner) % 2 == 0)
    assert s.sources["auto_memory_enabled"].startswith(f"{winner} settings ")
    assert str(world.root / files[winner]) in s.sources["auto_memory_enabled"]


@pytest.mark.parametrize("lower", ["user", "project", "local", "flag"])
def test_policy_cannot_be_overridden_by_any_file_or_memdir_env(world: World, lower: str) -> None:
    world.write(LEVEL_FILES["policy"], {"dailyLogMode": False, "model": "anthropic:policy"})
    world.write(LEVEL_FILES[lower], {"dailyLogMode": True, "model": "openai:other"})
    s = world.load(MEMDIR_DAILY_LOG="1", MEMDIR_MODEL="openai:env")
    assert s.daily_log_mode is False
    assert s.model == "anthropic:policy"
    assert s.sources["model"].startswith("policy settings")


def test_policy_dropins_merge_in_name_order(world: World) -> None:
    world.write("policy/managed-settings.json", {"model": "a:base", "autoDreamEnabled": True})
    world.write("policy/managed-settings.d/20-b.json", {"model": "a:twenty"})
    world.write("policy/managed-settings.d/10-a.json", {"model": "a:ten", "dailyLogMode": True})
    s = world.load()
    assert s.model == "a:twenty"
    assert s.daily_log_mode is True
    assert s.auto_dream_enabled is True
    assert "10-a.json" in s.sources["daily_log_mode"]


def test_policy_location_from_env(world: World, tmp_path: Path) -> None:
    world.write("elsewhere/managed-settings.json", {"autoMemoryEnabled": False})
    s = load_settings(
        {**world.env, "MEMDIR_POLICY_SETTINGS": str(tmp_path / "elsewhere")},
        cwd=world.project,
        flag_settings=None,
        claude_mode=False,
        memory_dir_flag=None,
    )
    assert s.auto_memory_enabled is False


def test_env_beats_user_files_for_memdir_keys(world: World) -> None:
    world.write(LEVEL_FILES["local"], {"model": "a:file", "recallSelector": "llm"})
    s = world.load(MEMDIR_MODEL="llamacpp:/m.gguf", MEMDIR_RECALL="local")
    assert (s.model, s.sources["model"]) == ("llamacpp:/m.gguf", "env MEMDIR_MODEL")
    assert s.recall_selector == "local"


def test_claude_mode_reads_memdir_keys_from_namespace(world: World) -> None:
    # Claude Code's own top-level "model" is an alias like "opus", not a memdir model spec.
    world.write(
        CLAUDE_LEVEL_FILES["user"],
        {"model": "opus", "memdir": {"model": "anthropic:claude-x", "teamMemoryEnabled": True}},
    )
    s = world.load(claude=True)
    assert s.model == "anthropic:claude-x"
    assert s.team_memory_enabled is True
    assert s.home == world.home / ".claude"
    assert s.memdir_home == world.home / ".memdir"


@pytest.mark.parametrize(
    ("env", "claude", "enabled", "source"),
    [
        ({}, False, True, "default"),
        ({"MEMDIR_DISABLE": "1"}, False, False, "env MEMDIR_DISABLE"),
        ({"MEMDIR_DISABLE": "TRUE"}, False, False, "env MEMDIR_DISABLE"),
        ({"MEMDIR_DISABLE": "off"}, False, True, "env MEMDIR_DISABLE"),
        ({"MEMDIR_DISABLE": "0", "MEMDIR_SIMPLE": "1"}, False, True, "env MEMDIR_DISABLE"),
        ({"MEMDIR_DISABLE": "maybe", "MEMDIR_SIMPLE": "1"}, False, False, "env MEMDIR_SIMPLE"),
        ({"MEMDIR_SIMPLE": "yes"}, False, False, "env MEMDIR_SIMPLE"),
        ({"MEMDIR_REMOTE": "1"}, False, False, "env MEMDIR_REMOTE without a remote memory dir"),
        ({"MEMDIR_REMOTE": "1", "MEMDIR_REMOTE_MEMORY_DIR": "/r/m"}, False, True, "default"),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, False, True, "default"),
        (
            {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"},
            True,
            False,
            "env CLAUDE_CODE_DISABLE_AUTO_MEMORY",
        ),
        ({"CLAUDE_CODE_SIMPLE": "1"}, True, False, "env CLAUDE_CODE_SIMPLE"),
        (
            {"CLAUDE_CODE_REMOTE": "1"},
            True,
            False,
            "env CLAUDE_CODE_REMOTE without a remote memory dir",
        ),
        (
            {"CLAUDE_CODE_REMOTE": "1", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r/m"},
            True,
            True,
            "default",
        ),
    ],
)
def test_enable_chain(
    world: World, env: dict[str, str], claude: bool, enabled: bool, source: str
) -> None:
    s = world.load_env(env, claude=claude)
    assert (s.auto_memory_enabled, s.sources["auto_memory_enabled"]) == (enabled, source)


def test_enable_chain_env_precedes_settings(world: World) -> None:
    world.write(LEVEL_FILES["policy"], {"autoMemoryEnabled": False})
    assert world.load().auto_memory_enabled is False
    assert world.load(MEMDIR_DISABLE="false").auto_memory_enabled is True


def test_project_settings_count_for_enabled(world: World) -> None:
    world.write(LEVEL_FILES["project"], {"autoMemoryEnabled": False})
    s = world.load()
    assert s.auto_memory_enabled is False
    assert s.sources["auto_memory_enabled"].startswith("project settings")


@pytest.mark.parametrize("claude", [False, True])
def test_project_settings_cannot_choose_the_memory_dir(world: World, claude: bool) -> None:
    files = CLAUDE_LEVEL_FILES if claude else LEVEL_FILES
    world.write(files["project"], {"autoMemoryDirectory": str(world.home / ".ssh")})
    s = world.load(claude=claude)
    assert s.memory_dir_override is None
    assert s.sources["memory_dir"] == "default"
    assert any("autoMemoryDirectory ignored" in w for w in s.warnings)


@pytest.mark.parametrize(
    ("levels", "winner"),
    [
        (("user",), "user"),
        (("user", "local"), "local"),
        (("user", "local", "flag"), "flag"),
        (("user", "local", "flag", "policy"), "policy"),
        (("project", "user"), "user"),
        (("policy", "user"), "policy"),
    ],
)
def test_memory_dir_setting_precedence(world: World, levels: tuple[str, ...], winner: str) -> None:
    for level in levels:
        world.write(LEVEL_FILES[level], {"autoMemoryDirectory": f"/srv/mem-{level}"})
    s = world.load()
    assert s.memory_dir_override == Path(f"/srv/mem-{winner}")
    assert s.sources["memory_dir"].startswith(f"{winner} settings")
    assert s.memory_dir_from_env is False


def test_memory_dir_setting_expands_tilde(world: World) -> None:
    world.write(LEVEL_FILES["user"], {"autoMemoryDirectory": "~/notes/memory"})
    assert world.load().memory_dir_override == world.home / "notes" / "memory"


def test_memory_dir_flag_and_env_override_settings(world: World) -> None:
    world.write(LEVEL_FILES["policy"], {"autoMemoryDirectory": "/srv/policy"})
    s = world.load(MEMDIR_DIR="/srv/env")
    assert (s.memory_dir_override, s.sources["memory_dir"]) == (Path("/srv/env"), "env MEMDIR_DIR")
    assert s.memory_dir_from_env is True
    s = world.load(MEMDIR_DIR="/srv/env", dir_flag=Path("/srv/flag"))
    assert (s.memory_dir_override, s.sources["memory_dir"]) == (Path("/srv/flag"), "flag --dir")
    s = world.load(claude=True, CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="/srv/cowork")
    assert s.memory_dir_override == Path("/srv/cowork")
    s = world.load(claude=False, CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="/srv/cowork")
    assert s.memory_dir_override == Path(
        "/srv/policy"
    )  # reference name only honoured in claude mode


def test_typed_dir_flag_is_relative_to_the_working_directory(world: World) -> None:
    s = world.load(dir_flag=Path("mem"))
    assert s.memory_dir_override == world.project / "mem"
    assert world.load(dir_flag=Path("./a/../b")).memory_dir_override == world.project / "b"
    assert world.load(dir_flag=Path("~/notes")).memory_dir_override == world.home / "notes"


def test_relative_dir_stays_refused_from_env_and_settings(world: World) -> None:
    with pytest.raises(ConfigError, match="absolute"):
        world.load(MEMDIR_DIR="mem")
    world.write(LEVEL_FILES["user"], {"autoMemoryDirectory": "mem"})
    with pytest.raises(ConfigError, match="absolute"):
        world.load()


@pytest.mark.parametrize(
    ("source_kind", "value", "named"),
    [
        ("env", "relative/dir", "env MEMDIR_DIR"),
        ("env", "~/mem", "env MEMDIR_DIR"),
        ("env", "//server/share", "env MEMDIR_DIR"),
        ("flag", "~", "flag --dir"),
        ("flag", "~/..", "flag --dir"),
        ("user", "~/..", "user settings"),
        ("user", "~", "user settings"),
        ("policy", "C:", "policy settings"),
        ("local", "/a", "local settings"),
    ],
)
def test_bad_memory_dir_names_its_source(
    world: World, source_kind: str, value: str, named: str
) -> None:
    with pytest.raises(ConfigError) as info:
        if source_kind == "env":
            world.load(MEMDIR_DIR=value)
        elif source_kind == "flag":
            world.load(dir_flag=Path(value))
        else:
            world.write(LEVEL_FILES[source_kind], {"autoMemoryDirectory": value})
            world.load()
    assert named in str(info.value)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "not valid JSON (line 1"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"autoMemoryEnabled": "yes"}', "'autoMemoryEnabled' must be true or false"),
        ('{"model": 3}', "'model' must be a non-empty string"),
        ('{"model": "  "}', "'model' must be a non-empty string"),
        ('{"autoDreamEnabled": 1}', "'autoDreamEnabled' must be true or false"),
        (b"\xff\xfe".decode("latin-1"), "not valid JSON"),
    ],
)
@pytest.mark.parametrize("level", ["user", "project", "policy"])
def test_bad_settings_file_names_the_file(
    world: World, content: str, fragment: str, level: str
) -> None:
    path = world.write(LEVEL_FILES[level], content)
    with pytest.raises(ConfigError) as info:
        world.load()
    assert str(path) in str(info.value)
    assert fragment in str(info.value)


def test_non_utf8_settings_file(world: World) -> None:
    path = world.root / LEVEL_FILES["user"]
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"model": "\xff"}')
    with pytest.raises(ConfigError, match="not UTF-8"):
        world.load()


def test_empty_settings_file_is_empty_object(world: World) -> None:
    world.write(LEVEL_FILES["user"], "  \n")
    assert world.load().files[0].loaded is True


def test_claude_namespace_must_be_object(world: World) -> None:
    world.write(CLAUDE_LEVEL_FILES["user"], {"memdir": "x"})
    with pytest.raises(ConfigError, match="'memdir' must be an object"):
        world.load(claude=True)


def test_missing_flag_settings_file(world: World) -> None:
    world.flag = world.root / "nope.json"
    with pytest.raises(ConfigError, match="--settings does not exist"):
        world.load()


@pytest.mark.parametrize("value", ["maybe", "2"])
def test_bad_memdir_boolean_env(world: World, value: str) -> None:
    with pytest.raises(ConfigError, match="MEMDIR_DAILY_LOG"):
        world.load(MEMDIR_DAILY_LOG=value)


def test_homes_and_claude_mode_from_env(world: World, tmp_path: Path) -> None:
    s = world.load(MEMDIR_HOME=str(tmp_path / "mh"))
    assert s.home == s.memory_base == tmp_path / "mh"
    s = world.load(MEMDIR_HOME="~/custom")
    assert s.home == world.home / "custom"
    s = world.load(MEMDIR_CLAUDE="1", CLAUDE_CONFIG_DIR=str(tmp_path / "cc"))
    assert s.claude_mode is True
    assert s.home == tmp_path / "cc"
    assert s.sources["claude_mode"] == "env MEMDIR_CLAUDE"
    s = world.load(MEMDIR_REMOTE_MEMORY_DIR=str(tmp_path / "remote"))
    assert s.memory_base == tmp_path / "remote"
    with pytest.raises(ConfigError, match="MEMDIR_HOME"):
        world.load(MEMDIR_HOME="relative")


def test_team_and_provider_strings(world: World) -> None:
    s = world.load(
        MEMDIR_TEAM_SYNC_URL="http://127.0.0.1:9",
        MEMDIR_TEAM_TOKEN="tok-secret",
        MEMDIR_TEAM_REPO="acme/app",
        MEMDIR_EXTRA_GUIDELINES="Be terse.",
    )
    assert (s.team_sync_url, s.team_token, s.team_repo) == (
        "http://127.0.0.1:9",
        "tok-secret",
        "acme/app",
    )
    assert s.team_memory_enabled is True  # on by default once a sync URL is configured
    assert s.extra_guidelines == "Be terse."
    assert "tok-secret" not in repr(s)
    assert world.load(MEMDIR_TEAM_SYNC_URL="http://x", MEMDIR_TEAM="0").team_memory_enabled is False
    s = world.load(claude=True, TEAM_MEMORY_SYNC_URL="http://y")
    assert s.team_sync_url == "http://y"


def test_project_settings_dir_is_git_root_in_memdir_mode(world: World) -> None:
    (world.project / ".git").mkdir()
    sub = world.project / "pkg"
    sub.mkdir()
    world.write(LEVEL_FILES["project"], {"dailyLogMode": True})
    s = load_settings(
        world.env, cwd=sub, flag_settings=None, claude_mode=False, memory_dir_flag=None
    )
    assert s.daily_log_mode is True
    assert s.project_dir == world.project.resolve()


def test_mistyped_memory_dir_setting(world: World) -> None:
    path = world.write(LEVEL_FILES["user"], {"autoMemoryDirectory": False})
    with pytest.raises(ConfigError, match="'autoMemoryDirectory' must be a non-empty string") as e:
        world.load()
    assert str(path) in str(e.value)


def test_private_secrets_setting(world: World) -> None:
    assert world.load().private_secrets == "warn"
    assert world.load().sources["private_secrets"] == "default"
    world.write(LEVEL_FILES["user"], {"privateSecrets": "refuse"})
    assert world.load().private_secrets == "refuse"
    assert world.load(MEMDIR_PRIVATE_SECRETS="warn").private_secrets == "warn"  # env over user
    world.write(LEVEL_FILES["policy"], {"privateSecrets": "refuse"})
    assert world.load(MEMDIR_PRIVATE_SECRETS="warn").private_secrets == "refuse"


def test_a_project_may_tighten_private_secrets_but_not_loosen_them(world: World) -> None:
    world.write(LEVEL_FILES["user"], {"privateSecrets": "refuse"})
    world.write(LEVEL_FILES["project"], {"privateSecrets": "warn"})
    s = world.load()
    assert s.private_secrets == "refuse" and s.sources["private_secrets"].startswith("user ")
    world.write(LEVEL_FILES["user"], {})
    world.write(LEVEL_FILES["project"], {"privateSecrets": "refuse"})
    assert world.load().private_secrets == "refuse"


@pytest.mark.parametrize("value", ["ignore", "Refuse", ""])
def test_bad_private_secrets_value_names_its_source(world: World, value: str) -> None:
    with pytest.raises(ConfigError, match=r"privateSecrets"):
        if value:
            world.load(MEMDIR_PRIVATE_SECRETS=value)
        else:
            world.write(LEVEL_FILES["local"], {"privateSecrets": value})
            world.load()


def test_host_model_settings(world: World) -> None:
    s = world.load()
    assert (s.host_model, s.host_model_budget_usd) == ("haiku", 1.0)
    world.write(LEVEL_FILES["user"], {"hostModel": "sonnet", "hostModelBudgetUsd": 2})
    s = world.load()
    assert (s.host_model, s.host_model_budget_usd) == ("sonnet", 2.0)
    s = world.load(MEMDIR_HOST_MODEL="OFF", MEMDIR_HOST_MODEL_BUDGET_USD="0.25")
    assert (s.host_model, s.host_model_budget_usd) == ("off", 0.25)
    world.write(LEVEL_FILES["policy"], {"hostModel": "off", "hostModelBudgetUsd": 0})
    s = world.load(MEMDIR_HOST_MODEL="sonnet", MEMDIR_HOST_MODEL_BUDGET_USD="5")
    assert (s.host_model, s.host_model_budget_usd) == ("off", 0.0)


def test_a_project_may_switch_the_host_model_off_or_lower_its_budget_but_not_raise_it(
    world: World,
) -> None:
    # a cloned repository must not spend the user's subscription on its own say-so
    world.write(LEVEL_FILES["project"], {"hostModel": "opus", "hostModelBudgetUsd": 50})
    s = world.load()
    assert (s.host_model, s.host_model_budget_usd) == ("haiku", 1.0)
    world.write(LEVEL_FILES["project"], {"hostModel": "off", "hostModelBudgetUsd": 0.1})
    s = world.load()
    assert (s.host_model, s.host_model_budget_usd) == ("off", 0.1)
    assert s.sources["host_model_budget_usd"].startswith("project ")


@pytest.mark.parametrize("raw", ["-1", "lots", "inf", "nan"])
def test_bad_host_budget_names_its_source(world: World, raw: str) -> None:
    with pytest.raises(ConfigError, match=r"MEMDIR_HOST_MODEL_BUDGET_USD.*hostModelBudgetUsd"):
        world.load(MEMDIR_HOST_MODEL_BUDGET_USD=raw)
    with pytest.raises(ConfigError, match="hostModel must be"):
        world.load(MEMDIR_HOST_MODEL="claude haiku")
