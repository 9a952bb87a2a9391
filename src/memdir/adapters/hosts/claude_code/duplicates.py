"""memdir wired into Claude Code twice: every hook runs twice and its context lands twice.

The forms that can coexist: the plugin (``claude plugin install memdir@…``, listed in the
host's ``plugins/installed_plugins.json`` and not disabled in ``enabledPlugins``) and a hooks
install into the user or the project ``settings.json``. Installing one form while another is
active is refused with what to remove; ``memdir doctor`` names the pairs that are there anyway
(a plugin installed after a project install). The hooks themselves also never inject the same
``SessionStart`` block twice into one context (:meth:`~.state.SessionState.claim_start`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memdir.adapters.hooks import settings_merge as sm

PLUGIN_NAME = "memdir"


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def active_plugin(claude_config_dir: Path, project_root: Path) -> str | None:
    """The memdir plugin's id (``memdir@<marketplace>``) when the host would load it here."""
    installed = _json(claude_config_dir / "plugins" / "installed_plugins.json")
    plugins = installed.get("plugins") if isinstance(installed, dict) else None
    if not isinstance(plugins, dict):
        return None
    settings = _json(claude_config_dir / "settings.json")
    enabled = settings.get("enabledPlugins") if isinstance(settings, dict) else None
    for plugin_id, entries in plugins.items():
        if not str(plugin_id).startswith(f"{PLUGIN_NAME}@"):
            continue
        if isinstance(enabled, dict) and enabled.get(plugin_id) is False:
            continue
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            where = entry.get("projectPath")
            if entry.get("scope", "user") == "user" or where == str(project_root):
                return str(plugin_id)
    return None


def hooks_installed(settings_file: Path) -> bool:
    """True when ``settings_file`` already runs memdir's hooks."""
    value = _json(settings_file)
    return isinstance(value, dict) and bool(sm.memdir_hook_commands(value))


def conflicts(
    scope: str, *, user_settings: Path, project_settings: Path, plugin: str | None
) -> list[str]:
    """What already runs memdir's hooks besides the ``scope`` install about to be made."""
    found = []
    if plugin is not None:
        found.append(
            f"the Claude Code plugin {plugin} (remove it with `claude plugin uninstall {plugin}`"
            " or keep it and skip this install)"
        )
    other, other_scope = (
        (project_settings, "project") if scope == "user" else (user_settings, "user")
    )
    if hooks_installed(other):
        found.append(
            f"memdir's hooks in {other} (`memdir uninstall claude-code --{other_scope}` first)"
        )
    return found


def doctor_problems(claude_config_dir: Path, project_root: Path) -> list[dict[str, str]]:
    """Every pair of active forms found here (a plugin installed after a hooks install...)."""
    user = claude_config_dir / "settings.json"
    project = project_root / ".claude" / "settings.json"
    forms = [f"plugin {p}" for p in [active_plugin(claude_config_dir, project_root)] if p]
    forms += [str(path) for path in (user, project) if hooks_installed(path)]
    if len(forms) < 2:
        return []
    detail = "memdir's hooks run twice in Claude Code, from " + " and ".join(forms)
    return [{"kind": "install-duplicate", "path": forms[-1], "detail": detail}]
