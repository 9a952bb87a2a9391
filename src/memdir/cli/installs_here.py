"""Which of the recorded installs concern the place ``memdir`` runs in.

``~/.memdir/installs.json`` records every install on the machine: the user's own (``--user``) and
those of every repository a project install was made in. ``memdir status`` and ``doctor`` run in
one repository: they speak of its installs and the user's, and name the others as elsewhere —
another repository's hooks are neither installed here nor this repository's problem.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memdir.cli.context import CliContext

HERE = ("project", "user")  # scopes that run here; "other" is another repository's


def locations(ctx: CliContext) -> Any:
    from memdir.adapters.hooks.dialect import Locations

    home = Path(ctx.env["HOME"]) if ctx.env.get("HOME") else Path.home()
    return Locations.from_env(ctx.env, home=home, project_root=ctx.paths.project_root)


def scope_of(host: str, path: str, loc: Any) -> str:
    """ "project" (this repository's file), "user" (the host's user-level file) or "other"."""
    from memdir.adapters.hosts import installable
    from memdir.errors import InstallError

    real = os.path.realpath(path)
    try:
        targets = installable(host)
    except InstallError:
        return "other"
    if "user" in targets.scopes:
        with_user = {os.path.realpath(t.path) for t in targets.install_targets("user", loc)}
        if real in with_user:
            return "user"
    root = os.path.realpath(loc.project_root)
    return "project" if real == root or real.startswith(root + os.sep) else "other"


def split_record(
    record: Mapping[str, Any], ctx: CliContext
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the record's entries that run here, those of other repositories)."""
    loc = locations(ctx)
    here: dict[str, Any] = {}
    other: dict[str, Any] = {}
    for path, added in record.items():
        host = added.get("host") if isinstance(added, dict) else None
        if isinstance(host, str) and scope_of(host, path, loc) == "other":
            other[path] = added
        else:
            here[path] = added
    return here, other


__all__ = ["HERE", "locations", "scope_of", "split_record"]
