"""Settings: one frozen object built from an injected env mapping and the settings files.

Invariants:

* Only entry points call :func:`load_settings`; the library receives the resulting values and
  never reads ``os.environ``.
* File precedence, later wins: user < project < local < flag (``--settings``) < policy (managed
  ``managed-settings.json`` then ``managed-settings.d/*.json`` in name order). Nothing a user,
  project or flag file says can override policy. memdir's own env variables (``MEMDIR_MODEL``,
  ``MEMDIR_DAILY_LOG``, ...) sit between policy and the files; the reference's enable chain and
  directory override variables keep the reference's order (env first).
* The *project* settings file may never choose the memory directory: a cloned repository must not
  be able to point memory writes at ``~/.ssh``. Such a value is ignored with a warning.
* Every value records the source that decided it (``Settings.sources``), for ``memdir where``.
* A corrupt or mistyped settings file, or an unsafe directory override, is a
  :class:`~memdir.errors.ConfigError` that names the file or variable.

In ``--claude`` mode (or ``MEMDIR_CLAUDE=1``) the home, files and variable names are the
reference's (``~/.claude``, ``.claude/settings*.json``, ``CLAUDE_*``), memdir-only keys are read
from a ``"memdir"`` object inside those files (top-level ``model`` there is Claude Code's own),
and caches still live under memdir's home.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.errors import ConfigError, NotRegularFileError
from memdir.paths import find_git_root, validate_memory_path
from memdir.pathsafe import read_regular

TRUTHY = frozenset({"1", "true", "yes", "on"})
FALSY = frozenset({"0", "false", "no", "off"})
CHILD_ENV_FLAG = "MEMDIR_CHILD"
"""Set for an agent CLI that memdir itself starts: every memdir hook then does nothing."""
LEVELS = ("user", "project", "local", "flag", "policy")
_MAC_POLICY = Path("/Library/Application Support")
DEFAULT_POLICY_DIRS = (
    {False: _MAC_POLICY / "memdir", True: _MAC_POLICY / "ClaudeCode"}
    if sys.platform == "darwin"
    else {False: Path("/etc/memdir"), True: Path("/etc/claude-code")}
)


def env_truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in TRUTHY


def env_falsy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in FALSY


@dataclass(frozen=True)
class SettingsFile:
    """One settings file that was consulted: its level, path and whether it existed."""

    level: str
    path: Path
    loaded: bool


@dataclass(frozen=True)
class Settings:
    """Resolved configuration. ``sources`` maps each field name to what decided it."""

    claude_mode: bool
    home: Path
    memdir_home: Path
    memory_base: Path
    project_dir: Path
    memory_dir_override: Path | None
    auto_memory_enabled: bool
    auto_dream_enabled: bool
    team_memory_enabled: bool
    daily_log_mode: bool
    model: str | None = None
    recall_selector: str | None = None
    extra_guidelines: str | None = None
    team_sync_url: str | None = None
    team_token: str | None = field(default=None, repr=False)
    team_repo: str | None = None
    private_secrets: str = "warn"
    host_model: str = "haiku"
    host_model_budget_usd: float = 1.0
    sources: Mapping[str, str] = field(default_factory=dict)
    files: tuple[SettingsFile, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def memory_dir_from_env(self) -> bool:
        """True when an env variable or ``--dir`` chose the dir (no automatic write carve-out)."""
        source = self.sources.get("memory_dir", "")
        return source.startswith(("env ", "flag --dir"))


@dataclass(frozen=True)
class _Layer:
    level: str
    path: Path
    data: Mapping[str, Any]

    @property
    def label(self) -> str:
        return f"{self.level} settings {self.path}"


def _home_dir(env: Mapping[str, str]) -> Path:
    home = env.get("HOME") or env.get("USERPROFILE") or _account_home()
    return Path(home)


def _account_home() -> str:
    try:
        import pwd  # POSIX only: memdir must still import on Windows
    except ImportError:
        return os.path.expanduser("~")
    return pwd.getpwuid(os.getuid()).pw_dir


def _dir_from_env(env: Mapping[str, str], name: str, home: Path) -> Path | None:
    raw = env.get(name)
    if not raw:
        return None
    if raw == "~" or raw.startswith("~/"):
        raw = str(home / raw[2:]) if raw != "~" else str(home)
    if not Path(raw).is_absolute():
        raise ConfigError(f"env {name}={raw!r} must be an absolute path")
    return Path(unicodedata.normalize("NFC", raw))


def _read_settings_file(level: str, path: Path) -> _Layer | None:
    try:
        text = read_regular(path).decode("utf-8")  # a FIFO here would hang every command
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnicodeDecodeError:
        raise ConfigError(f"settings file {path} is not UTF-8 text") from None
    except NotRegularFileError as exc:
        raise ConfigError(f"settings file {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc.strerror}") from None
    if not text.strip():
        return _Layer(level, path, {})
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"settings file {path} is not valid JSON (line {exc.lineno}, column {exc.colno}): "
            f"{exc.msg}"
        ) from None
    except RecursionError:  # the decoder's depth bound
        raise ConfigError(f"settings file {path} is nested too deeply to read") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"settings file {path} must hold a JSON object, not {type(data).__name__}"
        )
    return _Layer(level, path, data)


def _policy_paths(policy_dir: Path) -> list[Path]:
    paths = [policy_dir / "managed-settings.json"]
    dropins = policy_dir / "managed-settings.d"
    with contextlib.suppress(OSError):  # no drop-in directory is the normal case
        paths += sorted(p for p in dropins.iterdir() if p.suffix == ".json" and p.is_file())
    return paths


class _Layers:
    """The loaded files in precedence order, with typed lookups that report their source."""

    def __init__(self, layers: list[_Layer], claude_mode: bool):
        self.layers = layers
        self.claude_mode = claude_mode

    def _section(self, layer: _Layer, memdir_key: bool) -> Mapping[str, Any]:
        if not (memdir_key and self.claude_mode):
            return layer.data
        nested = layer.data.get("memdir", {})
        if not isinstance(nested, dict):
            raise ConfigError(f"{layer.label}: key 'memdir' must be an object")
        return nested

    def pick(
        self, key: str, kind: type, *, memdir_key: bool = False, levels: tuple[str, ...] = LEVELS
    ) -> tuple[Any, str] | None:
        for layer in reversed(self.layers):
            section = self._section(layer, memdir_key)
            if layer.level not in levels or key not in section:
                continue
            value = section[key]
            if not isinstance(value, kind) or (isinstance(value, str) and not value.strip()):
                wanted = "true or false" if kind is bool else "a non-empty string"
                raise ConfigError(f"{layer.label}: key {key!r} must be {wanted}, got {value!r}")
            return value, layer.label
        return None

    def defines_memdir(self, key: str, level: str) -> tuple[Any, str] | None:
        """(raw value, label) of memdir key ``key`` in the last layer of ``level``, unchecked."""
        for layer in reversed(self.layers):
            section = self._section(layer, True)
            if layer.level == level and key in section:
                return section[key], layer.label
        return None

    def defines(self, key: str, level: str) -> _Layer | None:
        return next((la for la in self.layers if la.level == level and key in la.data), None)


def _load_layers(
    *,
    home: Path,
    project_dir: Path,
    flag_settings: Path | None,
    policy_dir: Path,
    claude_mode: bool,
    cwd: Path,
) -> tuple[list[_Layer], list[SettingsFile]]:
    config_dir = project_dir / (".claude" if claude_mode else ".memdir")
    wanted: list[tuple[str, Path]] = [
        ("user", home / "settings.json"),
        ("project", config_dir / "settings.json"),
        ("local", config_dir / "settings.local.json"),
    ]
    if flag_settings is not None:
        flag_path = flag_settings if flag_settings.is_absolute() else cwd / flag_settings
        if not flag_path.is_file():
            raise ConfigError(f"settings file given by --settings does not exist: {flag_path}")
        wanted.append(("flag", flag_path))
    wanted += [("policy", p) for p in _policy_paths(policy_dir)]
    layers: list[_Layer] = []
    files: list[SettingsFile] = []
    for level, path in wanted:
        layer = _read_settings_file(level, path)
        files.append(SettingsFile(level, path, layer is not None))
        if layer is not None:
            layers.append(layer)
    return layers, files


def _names(claude_mode: bool, memdir_name: str, claude_name: str | None) -> list[str]:
    return [memdir_name] + ([claude_name] if claude_mode and claude_name else [])


def _auto_memory_enabled(
    env: Mapping[str, str], claude_mode: bool, layers: _Layers
) -> tuple[bool, str]:
    """The enable chain; the first rule that matches decides."""
    for name in _names(claude_mode, "MEMDIR_DISABLE", "CLAUDE_CODE_DISABLE_AUTO_MEMORY"):
        if env_truthy(env.get(name)):
            return False, f"env {name}"
        if env_falsy(env.get(name)):
            return True, f"env {name}"
    for name in _names(claude_mode, "MEMDIR_SIMPLE", "CLAUDE_CODE_SIMPLE"):
        if env_truthy(env.get(name)):
            return False, f"env {name}"
    remote_dirs = _names(claude_mode, "MEMDIR_REMOTE_MEMORY_DIR", "CLAUDE_CODE_REMOTE_MEMORY_DIR")
    has_remote_dir = any(env.get(n) for n in remote_dirs)
    for name in _names(claude_mode, "MEMDIR_REMOTE", "CLAUDE_CODE_REMOTE"):
        if env_truthy(env.get(name)) and not has_remote_dir:
            return False, f"env {name} without a remote memory dir"
    picked = layers.pick("autoMemoryEnabled", bool)
    if picked is not None:
        return bool(picked[0]), picked[1]
    return True, "default"


def _memory_dir_override(
    env: Mapping[str, str],
    claude_mode: bool,
    layers: _Layers,
    flag_dir: Path | None,
    home: Path,
    cwd: Path,
) -> tuple[Path | None, str, list[str]]:
    warnings: list[str] = []
    project = layers.defines("autoMemoryDirectory", "project")
    if project is not None:
        warnings.append(
            f"{project.label}: autoMemoryDirectory ignored; a project's own settings may not "
            "choose where memory is written (set it in user, local, flag or policy settings)"
        )
    if flag_dir is not None:
        # A path the user typed on the command line means what it means in their shell:
        # relative to the working directory, ``~`` for their home. Settings files and env
        # values keep the strict absolute-only rule (a project file must not aim elsewhere).
        typed = str(flag_dir)
        if typed.startswith("~"):
            checked = validate_memory_path(typed, source="flag --dir", home=home)
        else:
            if typed and not os.path.isabs(typed):
                typed = os.path.join(os.path.abspath(cwd), typed)
            checked = validate_memory_path(typed, source="flag --dir")
        return checked, "flag --dir", warnings
    env_names = _names(claude_mode, "MEMDIR_DIR", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE")
    for name in env_names:
        raw = env.get(name)
        if raw:
            return validate_memory_path(raw, source=f"env {name}"), f"env {name}", warnings
    levels = ("user", "local", "flag", "policy")
    picked = layers.pick("autoMemoryDirectory", str, levels=levels)
    if picked is not None:
        value, label = picked
        return validate_memory_path(value, source=label, home=home), label, warnings
    return None, "default", warnings


def _env_value(env: Mapping[str, str], name: str, kind: type) -> Any:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return None
    if kind is str:
        return raw
    if env_truthy(raw):
        return True
    if env_falsy(raw):
        return False
    raise ConfigError(f"env {name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def _resolve(
    env: Mapping[str, str],
    env_names: list[str],
    layers: _Layers | None,
    key: str | None,
    kind: type,
    *,
    memdir_key: bool = True,
) -> tuple[Any, str] | None:
    """Policy file, then env, then the other files (flag > local > project > user)."""
    if layers is not None and key is not None:
        picked = layers.pick(key, kind, memdir_key=memdir_key, levels=("policy",))
        if picked is not None:
            return picked
    for name in env_names:
        value = _env_value(env, name, kind)
        if value is not None:
            return value, f"env {name}"
    if layers is not None and key is not None:
        return layers.pick(key, kind, memdir_key=memdir_key, levels=LEVELS[:-1])
    return None


def _flag(
    env: Mapping[str, str], env_name: str, layers: _Layers, key: str, default: tuple[bool, str]
) -> tuple[bool, str]:
    picked = _resolve(env, [env_name], layers, key, bool, memdir_key=key != "autoDreamEnabled")
    return (bool(picked[0]), picked[1]) if picked is not None else default


def _text(
    env: Mapping[str, str], env_names: list[str], layers: _Layers | None = None, key: str = ""
) -> tuple[str | None, str]:
    picked = _resolve(env, env_names, layers, key or None, str)
    return (str(picked[0]), picked[1]) if picked is not None else (None, "unset")


def memdir_home_from_env(env: Mapping[str, str]) -> Path:
    """memdir's home for ``env`` (``MEMDIR_HOME``, else ``~/.memdir``), as settings resolve it:
    what runs inside a host (the OpenCode plugin's install-time info) must name the same dirs."""
    user_home = _home_dir(env)
    return _dir_from_env(env, "MEMDIR_HOME", user_home) or user_home / ".memdir"


def _homes(
    env: Mapping[str, str], claude: bool, sources: dict[str, str]
) -> tuple[Path, Path, Path, Path]:
    """(user home, memdir home, config home, memory base), recording where each came from."""
    user_home = _home_dir(env)
    memdir_home = memdir_home_from_env(env)
    sources["memdir_home"] = "env MEMDIR_HOME" if env.get("MEMDIR_HOME") else "default ~/.memdir"
    if claude:
        home = _dir_from_env(env, "CLAUDE_CONFIG_DIR", user_home) or user_home / ".claude"
        sources["home"] = "env CLAUDE_CONFIG_DIR" if env.get("CLAUDE_CONFIG_DIR") else "~/.claude"
    else:
        home, sources["home"] = memdir_home, sources["memdir_home"]
    home = Path(unicodedata.normalize("NFC", str(home)))
    memory_base, sources["memory_base"] = home, f"same as home ({sources['home']})"
    for name in _names(claude, "MEMDIR_REMOTE_MEMORY_DIR", "CLAUDE_CODE_REMOTE_MEMORY_DIR"):
        remote = _dir_from_env(env, name, user_home)
        if remote is not None:
            memory_base, sources["memory_base"] = remote, f"env {name}"
            break
    return user_home, memdir_home, home, memory_base


def _features(
    env: Mapping[str, str], claude: bool, layers: _Layers, sources: dict[str, str]
) -> dict[str, Any]:
    """The feature switches and plain strings, as :class:`Settings` keyword arguments."""
    values: dict[str, Any] = {}
    values["auto_dream_enabled"], sources["auto_dream_enabled"] = _flag(
        env, "MEMDIR_AUTO_DREAM", layers, "autoDreamEnabled", (False, "default")
    )
    values["daily_log_mode"], sources["daily_log_mode"] = _flag(
        env, "MEMDIR_DAILY_LOG", layers, "dailyLogMode", (False, "default")
    )
    sync_names = _names(claude, "MEMDIR_TEAM_SYNC_URL", "TEAM_MEMORY_SYNC_URL")
    sync_url, sources["team_sync_url"] = _text(env, sync_names)
    values["team_sync_url"] = sync_url
    team_default = (sync_url is not None, "default (on when a team sync URL is set)")
    values["team_memory_enabled"], sources["team_memory_enabled"] = _flag(
        env, "MEMDIR_TEAM", layers, "teamMemoryEnabled", team_default
    )
    values["model"], sources["model"] = _text(env, ["MEMDIR_MODEL"], layers, "model")
    values["recall_selector"], sources["recall_selector"] = _text(
        env, ["MEMDIR_RECALL"], layers, "recallSelector"
    )
    guideline_names = _names(
        claude, "MEMDIR_EXTRA_GUIDELINES", "CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES"
    )
    values["extra_guidelines"], sources["extra_guidelines"] = _text(env, guideline_names)
    values["team_token"], sources["team_token"] = _text(env, ["MEMDIR_TEAM_TOKEN"])
    values["team_repo"], sources["team_repo"] = _text(env, ["MEMDIR_TEAM_REPO"])
    values["private_secrets"], sources["private_secrets"] = _private_secrets(env, layers)
    values["host_model"], sources["host_model"] = _host_model(env, layers)
    budget, sources["host_model_budget_usd"] = _host_budget(env, layers)
    values["host_model_budget_usd"] = budget
    return values


DEFAULT_HOST_MODEL, DEFAULT_HOST_BUDGET_USD = "haiku", 1.0
_TRUSTED = ("user", "local", "flag")


def _host_model(env: Mapping[str, str], layers: _Layers) -> tuple[str, str]:
    """``hostModel``: the model the host CLI runs memdir's background paths on, or ``off``.
    Spending the user's subscription is the user's call: a project file may only say ``off``."""
    key = "hostModel"
    picked = (
        layers.pick(key, str, memdir_key=True, levels=("policy",))
        or _resolve(env, ["MEMDIR_HOST_MODEL"], None, None, str)
        or layers.pick(key, str, memdir_key=True, levels=_TRUSTED)
    )
    value, source = (
        (str(picked[0]).strip(), picked[1]) if picked else (DEFAULT_HOST_MODEL, "default")
    )
    project = layers.pick(key, str, memdir_key=True, levels=("project",))
    if project is not None and str(project[0]).strip().lower() == "off":
        value, source = "off", project[1]
    if any(ch.isspace() for ch in value):
        raise ConfigError(f"{source}: hostModel must be a model name or 'off', not {value!r}")
    return ("off" if value.lower() == "off" else value), source


def _budget_value(raw: Any, where: str) -> float:
    try:
        value = float(raw) if not isinstance(raw, bool) else -1.0
    except (TypeError, ValueError):
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise ConfigError(
            f"{where}: hostModelBudgetUsd must be a number of dollars >= 0, not {raw!r}"
        )
    return value


def _host_budget(env: Mapping[str, str], layers: _Layers) -> tuple[float, str]:
    """``hostModelBudgetUsd``: host-model dollars a day; a project file may only lower it."""
    key, found = "hostModelBudgetUsd", []
    for level in ("policy", "env", *_TRUSTED):
        if level == "env":
            raw = env.get("MEMDIR_HOST_MODEL_BUDGET_USD", "").strip()
            if raw:
                found.append((raw, "env MEMDIR_HOST_MODEL_BUDGET_USD"))
            continue
        layer = layers.defines_memdir(key, level)
        if layer is not None:
            found.append(layer)
        if found:
            break
    value, source = (
        (_budget_value(found[0][0], found[0][1]), found[0][1])
        if found
        else (DEFAULT_HOST_BUDGET_USD, "default")
    )
    project = layers.defines_memdir(key, "project")
    if project is not None:
        lower = _budget_value(*project)
        if lower < value:
            value, source = lower, project[1]
    return value, source


PRIVATE_SECRET_POLICIES = ("warn", "refuse")


def _private_secrets(env: Mapping[str, str], layers: _Layers) -> tuple[str, str]:
    """``privateSecrets``: warn (default) or refuse. A project's own settings file may only
    tighten it: a cloned repository must not switch off a refusal the user chose."""
    key, trusted = "privateSecrets", ("user", "local", "flag")
    picked = (
        layers.pick(key, str, memdir_key=True, levels=("policy",))
        or _resolve(env, ["MEMDIR_PRIVATE_SECRETS"], None, None, str)
        or layers.pick(key, str, memdir_key=True, levels=trusted)
    )
    value, source = (str(picked[0]).strip(), picked[1]) if picked else ("warn", "default")
    project = layers.pick(key, str, memdir_key=True, levels=("project",))
    if project is not None and str(project[0]).strip() == "refuse":
        value, source = "refuse", project[1]
    for candidate, where in ((value, source), *([project] if project else [])):
        if str(candidate).strip() not in PRIVATE_SECRET_POLICIES:
            raise ConfigError(
                f"{where}: privateSecrets must be 'warn' or 'refuse', not {candidate!r}"
            )
    return value, source


def load_settings(
    env: Mapping[str, str],
    *,
    cwd: Path,
    flag_settings: Path | None,
    claude_mode: bool,
    memory_dir_flag: Path | None,
    policy_dir: Path | None = None,
) -> Settings:
    """Build :class:`Settings` from ``env`` and the settings files around ``cwd``.

    ``policy_dir`` (or env ``MEMDIR_POLICY_SETTINGS``) replaces the managed-policy directory,
    which otherwise is ``/etc/memdir`` (``/etc/claude-code`` in claude mode; under
    ``/Library/Application Support`` on macOS).
    """
    claude = claude_mode or env_truthy(env.get("MEMDIR_CLAUDE"))
    sources = {"claude_mode": "default"}
    if claude:
        sources["claude_mode"] = "flag --claude" if claude_mode else "env MEMDIR_CLAUDE"
    user_home, memdir_home, home, memory_base = _homes(env, claude, sources)
    here = Path(cwd).resolve()
    # The reference reads project settings from the launch directory; memdir's CLI is often run
    # from a subdirectory, so in memdir mode the repository root's .memdir/ is used.
    project_dir = here if claude else (find_git_root(here) or here)
    if policy_dir is None:
        raw_policy = env.get("MEMDIR_POLICY_SETTINGS")
        policy_dir = Path(raw_policy) if raw_policy else DEFAULT_POLICY_DIRS[claude]
    raw_layers, files = _load_layers(
        home=home,
        project_dir=project_dir,
        flag_settings=flag_settings,
        policy_dir=policy_dir,
        claude_mode=claude,
        cwd=here,
    )
    layers = _Layers(raw_layers, claude)
    enabled, sources["auto_memory_enabled"] = _auto_memory_enabled(env, claude, layers)
    override, sources["memory_dir"], warnings = _memory_dir_override(
        env, claude, layers, memory_dir_flag, user_home, Path(cwd)
    )
    return Settings(
        claude_mode=claude,
        home=home,
        memdir_home=memdir_home,
        memory_base=memory_base,
        project_dir=project_dir,
        memory_dir_override=override,
        auto_memory_enabled=enabled,
        **_features(env, claude, layers, sources),
        sources=sources,
        files=tuple(files),
        warnings=tuple(warnings),
    )
