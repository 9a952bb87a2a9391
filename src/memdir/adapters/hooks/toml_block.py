"""memdir's MCP server as one marked block in a TOML config (Codex's ``config.toml``).

A TOML file is edited as text, never re-serialised: comments, order and layout of everything
else are the user's, and ``uninstall`` must give back the very bytes the file had. memdir's
part is one block between two marker comments, appended at the end of the file::

    # >>> memdir (memdir uninstall codex removes this block)
    [mcp_servers.memdir]
    command = "memdir"
    args = ["mcp"]
    # <<< memdir

Invariants: the file must parse (``tomllib``) before and after, or nothing is written; a
``[mcp_servers.memdir]`` table the user wrote outside the block is refused, not overwritten;
adding twice gives the same text (the block is taken out and appended again).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from memdir.errors import InstallError

BEGIN = "# >>> memdir (memdir uninstall removes this block)"
END = "# <<< memdir"
_BLOCK = re.compile(r"(?:^\n)?^# >>> memdir[^\n]*\n.*?^# <<< memdir[^\n]*\n?", re.M | re.S)


def _load(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(
            f"{where} is not valid TOML ({exc}); fix it first, memdir will not rewrite a file "
            "it cannot read"
        ) from None
    except RecursionError:
        raise InstallError(f"{where} is nested too deeply to read") from None


def _value(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string is JSON-compatible
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise InstallError(f"cannot write {type(value).__name__} into TOML")


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def render(table: Sequence[str], name: str, entry: Mapping[str, Any]) -> str:
    header = ".".join(_key(k) for k in (*table, name))
    lines = [BEGIN, f"[{header}]", *(f"{_key(k)} = {_value(v)}" for k, v in entry.items()), END]
    return "\n".join(lines) + "\n"


def _lookup(config: Mapping[str, Any], path: Sequence[str]) -> Any:
    node: Any = config
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def add(
    text: str | None, table: Sequence[str], name: str, entry: Mapping[str, Any], where: str
) -> str:
    """``text`` with memdir's block holding ``[table.name]`` = ``entry``."""
    before = text or ""
    _load(before, where)
    without = remove(before, where)
    if _lookup(_load(without, where), [*table, name]) is not None:
        raise InstallError(
            f"{where} already has a [{'.'.join([*table, name])}] table memdir did not write; "
            "remove it or rename it first"
        )
    if without and not without.endswith("\n"):
        without += "\n"
    after = without + ("\n" if without.strip() else "") + render(table, name, entry)
    try:
        parsed = tomllib.loads(after)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise InstallError(
            f"{where}: memdir's [{'.'.join([*table, name])}] table does not fit into this file "
            f"({exc}; an inline `{table[0]} = {{...}}`?); nothing was written — add the table "
            "by hand or make that an ordinary table"
        ) from None
    if _lookup(parsed, [*table, name]) != dict(entry):
        raise InstallError(f"{where}: memdir's block did not read back as written")
    return after


def remove(text: str, where: str) -> str:
    """``text`` without memdir's block (unchanged when there is none)."""
    return _BLOCK.sub("", text, count=1)


def same(a: str, b: str) -> bool:
    """Both texts hold the same TOML values."""
    try:
        return tomllib.loads(a) == tomllib.loads(b)
    except (tomllib.TOMLDecodeError, RecursionError):
        return False


__all__ = ["BEGIN", "END", "add", "remove", "render", "same"]
