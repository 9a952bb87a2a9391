"""Merge memdir's hooks and MCP server into a host's JSON config, and take exactly them out again.

Invariants:
- Pure functions on parsed JSON: the input object is never mutated; every key memdir does not
  own (other tools' hooks, unknown settings, their order) comes out unchanged.
- Idempotent: adding what is already there changes nothing (a hook is identified by its exact
  command string; the MCP server by its name).
- :func:`remove_hooks` removes only the commands given (those the install recorded) and then only
  containers that became empty *and* that the install created, so ``install`` then ``uninstall``
  gives back the original object.
- :func:`dump` writes with the indentation and final newline the file already had, so a file
  that round-trips unchanged is byte-identical.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from memdir.adapters.hooks.dialect import HookSpec
from memdir.errors import InstallError

JSONObject = dict[str, Any]


def parse(text: str | None, *, where: str) -> JSONObject:
    """A config file's object ({} for a missing or empty file); InstallError otherwise."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstallError(
            f"{where} is not valid JSON (line {exc.lineno}: {exc.msg}); fix it first, "
            "memdir will not rewrite a file it cannot read"
        ) from None
    except RecursionError:  # the decoder's depth bound: no real settings file nests this deep
        raise InstallError(
            f"{where} is nested too deeply to read; fix it first, "
            "memdir will not rewrite a file it cannot read"
        ) from None
    if not isinstance(value, dict):
        raise InstallError(f"{where} must hold a JSON object, not {type(value).__name__}")
    return value


def dump(value: Mapping[str, Any], *, like: str | None) -> str:
    """Serialise ``value`` with the layout of the text it replaces (2 spaces by default)."""
    indent: str | int = 2
    if like:
        match = re.search(r"^\{\s*\n([ \t]+)\S", like)
        if match:
            found = match.group(1)
            indent = "\t" if "\t" in found else len(found)
    newline = "\n" if like is None or like.endswith("\n") else ""
    return json.dumps(value, indent=indent, ensure_ascii=False) + newline


def _object(parent: JSONObject, key: str, where: str) -> JSONObject:
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InstallError(f"{where}: {key!r} is not an object; not touching it")
    return value


def add_hooks(settings: JSONObject, specs: Iterable[HookSpec]) -> tuple[JSONObject, list[str]]:
    """(new settings, created containers such as ``hooks`` or ``hooks.Stop``)."""
    out = copy.deepcopy(settings)
    created: list[str] = []
    if "hooks" not in out:
        created.append("hooks")
    hooks = _object(out, "hooks", "settings")
    out["hooks"] = hooks
    for spec in specs:
        groups = hooks.get(spec.event)
        if groups is None:
            groups = hooks[spec.event] = []
            created.append(f"hooks.{spec.event}")
        if not isinstance(groups, list):
            raise InstallError(f"settings: hooks.{spec.event} is not a list; not touching it")
        if spec.command not in set(_commands(groups)):
            groups.append(spec.entry())
        else:
            _update(groups, spec)
    return out, created


def _update(groups: list[Any], spec: HookSpec) -> None:
    """An earlier install's hook with this command takes this one's timeout and ``async``
    (memdir installed ``stop`` and ``session-end`` ``async`` before; keeping that would cost
    every ``claude -p`` ~1.5 s)."""
    want = spec.entry() if spec.flat else spec.entry()["hooks"][0]
    for group in groups:
        if _is_flat(group) and _flat_command(group) == spec.command:
            timeout = spec.keys[1] if spec.flat else "timeout"
            group[timeout] = want[timeout]
        elif isinstance(group, dict) and isinstance(group.get("hooks"), list):
            for hook in group["hooks"]:
                if isinstance(hook, dict) and hook.get("command") == spec.command:
                    hook["timeout"] = want["timeout"]
                    for key in ("name", "statusMessage"):
                        if key in want:
                            hook[key] = want[key]
                    if "async" in want:
                        hook["async"] = want["async"]
                    else:
                        hook.pop("async", None)


def _is_flat(group: Any) -> bool:
    """A hook listed under its event with no group around it (Cursor's ``hooks.json``,
    Copilot CLI's ``bash`` hooks)."""
    return (
        isinstance(group, dict)
        and isinstance(_flat_command(group), str)
        and not isinstance(group.get("hooks"), list)
    )


def _flat_command(group: dict[str, Any]) -> Any:
    return group.get("command", group.get("bash"))


def _commands(groups: list[Any]) -> Iterable[str]:
    for group in groups:
        if _is_flat(group):
            yield _flat_command(group)
        elif isinstance(group, dict) and isinstance(group.get("hooks"), list):
            for hook in group["hooks"]:
                if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                    yield hook["command"]


def remove_hooks(
    settings: JSONObject, commands: Iterable[str], created: Iterable[str] | None = ()
) -> JSONObject:
    """``settings`` without the hooks whose command is in ``commands``. ``created``: the
    containers the install added, removed once empty; None when no record says (then a list
    memdir's hooks were all of goes with them)."""
    out = copy.deepcopy(settings)
    drop = set(commands)
    unknown = created is None
    made = set(created or ())
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if _is_flat(group):
                if _flat_command(group) not in drop:
                    kept_groups.append(group)
                continue
            if not (isinstance(group, dict) and isinstance(group.get("hooks"), list)):
                kept_groups.append(group)
                continue
            kept = [h for h in group["hooks"] if not _is_dropped(h, drop)]
            if len(kept) == len(group["hooks"]):
                kept_groups.append(group)
            elif kept:
                kept_groups.append({**group, "hooks": kept})
        hooks[event] = kept_groups
        if not kept_groups and (f"hooks.{event}" in made or (unknown and groups)):
            del hooks[event]
    if not hooks and "hooks" in made:
        del out["hooks"]
    return out


def _is_dropped(hook: Any, drop: set[str]) -> bool:
    return isinstance(hook, dict) and hook.get("command") in drop


def memdir_hook_commands(settings: Mapping[str, Any]) -> list[str]:
    """Commands in ``settings`` that look like memdir's hooks (for an uninstall with no record)."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    pattern = re.compile(
        r"(^|[/\s'\"])memdir['\"]?(\s.*)?\shook(\s+--host\s+[a-z-]+)?\s+[a-z-]+"
        r"(\s*\|\|\s*true)?\s*$"  # Gemini's commands end in `|| true`
    )
    found = []
    for groups in hooks.values():
        if isinstance(groups, list):
            found += [c for c in _commands(groups) if pattern.search(c)]
    return found


def async_memdir_hooks(settings: Mapping[str, Any]) -> list[str]:
    """memdir's hook commands in ``settings`` that are marked ``async`` (an earlier install)."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    ours = set(memdir_hook_commands(settings))
    found = []
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else []:
                if isinstance(hook, dict) and hook.get("async") and hook.get("command") in ours:
                    found.append(str(hook["command"]))
    return found


def set_server(
    config: JSONObject, path: tuple[str, ...], name: str, server: JSONObject
) -> tuple[JSONObject, list[str]]:
    """``config`` with ``server`` at ``path + (name,)``; (new config, created containers)."""
    out = copy.deepcopy(config)
    created: list[str] = []
    node = out
    for depth, key in enumerate(path):
        if key not in node:
            created.append(".".join(path[: depth + 1]))
        child = _object(node, key, "MCP config")
        node[key] = child
        node = child
    existing = node.get(name)
    if existing is not None and existing != server:
        raise InstallError(
            f"an MCP server named {name!r} is already configured differently; "
            "remove it or uninstall first"
        )
    node[name] = server
    return out, created


def remove_server(
    config: JSONObject, path: tuple[str, ...], name: str, created: Iterable[str] = ()
) -> JSONObject:
    """``config`` without the server ``name`` (and the containers the install created)."""
    out = copy.deepcopy(config)
    made = set(created)
    chain: list[JSONObject] = [out]
    for key in path:
        child = chain[-1].get(key)
        if not isinstance(child, dict):
            return out
        chain.append(child)
    chain[-1].pop(name, None)
    for depth in range(len(path), 0, -1):
        dotted = ".".join(path[:depth])
        if not chain[depth] and dotted in made:
            del chain[depth - 1][path[depth - 1]]
    return out
