"""A whole file an install writes and its uninstall deletes (OpenCode's plugin).

Where the other targets are edits inside a user's config, this one belongs to memdir entirely:
the host gives its text (``file_text(target, command, loc)``), the install record keeps its digest
and the directories the install created for it. Invariants: an install never overwrites a file
memdir did not write; an uninstall deletes the file only while it still has the bytes memdir
wrote (an edited one is refused, named, and left alone), and then the directories it created,
when they are empty again — once the files the host itself writes there because memdir's file
is there (``generated_files``: OpenCode's ``.gitignore``) are gone too, each only while it holds
exactly the host's text.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memdir.adapters.hooks.dialect import Installable, Locations, Target
from memdir.errors import InstallError


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def missing_dirs(path: Path) -> list[str]:
    """``path``'s ancestors that do not exist yet, deepest first."""
    missing = []
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        missing.append(str(parent))
        parent = parent.parent
    return missing


def plan(
    host: Installable,
    target: Target,
    before: str | None,
    command: Sequence[str],
    previous: Mapping[str, Any],
    loc: Locations,
) -> tuple[str, dict[str, Any]]:
    """(the file's text after the install, what the record keeps)."""
    text_of = getattr(host, "file_text", None)
    if text_of is None:
        raise InstallError(f"{host.title} gives no text for {target.path}")
    text = str(text_of(target, command, loc))
    ours = previous.get("file_sha256")
    if before is not None and before != text and digest(before) != ours:
        raise InstallError(
            f"{target.path} exists and memdir did not write it; move it aside to install"
        )
    created = list(previous.get("created_dirs", [])) or missing_dirs(target.path)
    # the commands the file runs as its fallback: `memdir status` counts them as the host's
    # hooks and `memdir doctor` checks their program resolves, as for hooks in a config file
    events = getattr(host, "events", {})
    hooks = [shlex.join([*command, "hook", "--host", host.name, word]) for word in events]
    generated = {n: digest(t) for n, t in getattr(host, "generated_files", {}).items()}
    record: dict[str, Any] = {"file_sha256": digest(text), "created_dirs": created, "hooks": hooks}
    if generated:
        record["generated"] = generated
    packages = list(getattr(host, "generated_packages", ()))
    if packages:
        record["generated_packages"] = packages
    return text, record


def unplan(target: Target, before: str, added: Mapping[str, Any]) -> None:
    """Check ``before`` may be deleted (None: delete it); InstallError when it was edited."""
    if digest(before) != added.get("file_sha256"):
        raise InstallError(
            f"{target.path} was changed since memdir wrote it; memdir leaves it — delete it "
            "yourself, or put back what memdir wrote, to uninstall"
        )


# what npm or bun leave where a host installs packages into a dir (OpenCode: its plugin SDK)
_PACKAGE_FILES = ("package.json", "package-lock.json", "bun.lock", "bun.lockb")


def _host_packages(directory: Path, packages: Sequence[str]) -> None:
    """Remove a package install the host made in ``directory`` — only while its
    ``package.json`` lists nothing but ``packages`` (a user's own dependencies keep it all)."""
    try:
        manifest = json.loads((directory / "package.json").read_text("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return
    deps = manifest.get("dependencies") if isinstance(manifest, dict) else None
    if (
        not isinstance(deps, dict)
        or set(manifest) != {"dependencies"}
        or not set(deps) <= set(packages)
    ):
        return
    modules = directory / "node_modules"
    with contextlib.suppress(OSError):
        if modules.is_symlink():
            modules.unlink()
        elif modules.is_dir():
            shutil.rmtree(modules)
    for name in _PACKAGE_FILES:
        with contextlib.suppress(OSError):
            path = directory / name
            if path.is_file() and not path.is_symlink():
                path.unlink()


def remove_created_dirs(added: Mapping[str, Any]) -> None:
    """The directories the install made for the file, deepest first, while empty but for the
    host's own generated files (removed first, when their bytes are the host's) and a package
    install the host made there of only its own packages (OpenCode's plugin SDK)."""
    generated = added.get("generated") or {}
    packages = [p for p in added.get("generated_packages") or [] if isinstance(p, str)]
    for raw in added.get("created_dirs", []):
        if packages:
            _host_packages(Path(raw), packages)
        for name, want in generated.items():
            path = Path(raw) / name
            with contextlib.suppress(OSError, UnicodeDecodeError):
                ours = not path.is_symlink() and path.is_file()
                if ours and digest(path.read_text("utf-8")) == want:
                    path.unlink()
        with contextlib.suppress(OSError):  # not empty (the user's files), or gone: keep going
            Path(raw).rmdir()


__all__ = ["digest", "plan", "remove_created_dirs", "unplan"]
