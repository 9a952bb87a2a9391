"""``memdir secrets scan|redact``: find credentials in memory files, or print a file without them.

Invariant: nothing this command prints -- table, JSON, warnings or errors -- contains a matched
value. ``scan`` reports file, line, rule id and label; ``redact`` prints the text with every
match replaced by ``[REDACTED]``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memdir.cli.context import CliContext
from memdir.cli.output import table
from memdir.errors import MemdirError, MemoryNotFoundError, NotRegularFileError
from memdir.pathsafe import is_within, read_regular
from memdir.team.secrets import redact, scan, scan_file


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("secrets", help="scan memory for credentials, or print a file redacted")
    actions = p.add_subparsers(dest="secrets_command", metavar="<action>", required=True)

    s = actions.add_parser(
        "scan", help="report credentials (file, line, rule; never the value); exit 1 if any"
    )
    s.add_argument(
        "paths", nargs="*", type=Path, help="files or directories (default: the memory dir)"
    )
    s.set_defaults(handler=cmd_scan)

    r = actions.add_parser("redact", help="print a file with every credential replaced")
    r.add_argument("file", type=Path)
    r.set_defaults(handler=cmd_redact)


def _default_roots(ctx: CliContext) -> list[Path]:
    roots = [ctx.memory_dir]
    team = ctx.paths.team_dir
    if not is_within(ctx.memory_dir, team):
        roots.append(team)
    return [r for r in roots if r.exists()]


def _files(root: Path) -> Iterator[Path]:
    """Regular files under ``root`` in a stable order; symlinked dirs are not followed."""
    if not root.exists():
        raise MemoryNotFoundError(f"no such file or directory: {root}")
    if not root.is_dir():
        yield root
        return
    for here, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = Path(here) / name
            if path.is_file():
                yield path


def cmd_scan(ctx: CliContext) -> int:
    given = [p if p.is_absolute() else ctx.cwd / p for p in ctx.args.paths]
    roots = given or _default_roots(ctx)
    rows: list[dict[str, Any]] = []
    scanned = 0
    for root in roots:
        for path in _files(root):
            scanned += 1
            for finding in scan_file(path):
                rows.append(
                    {
                        "file": str(path),
                        "line": finding.line,
                        "rule_id": finding.rule_id,
                        "label": finding.label,
                    }
                )
    files_hit = len({r["file"] for r in rows})
    if rows:
        summary = f"{len(rows)} potential secret(s) in {files_hit} of {scanned} file(s)"
        text = table(rows, ["file", "line", "rule_id", "label"]) + "\n\n" + summary
    else:
        text = f"no secrets found in {scanned} file(s)"
    payload = {"scanned_files": scanned, "roots": [str(r) for r in roots], "findings": rows}
    ctx.out.data(payload, text)
    return 1 if rows else 0


def cmd_redact(ctx: CliContext) -> int:
    path: Path = ctx.args.file if ctx.args.file.is_absolute() else ctx.cwd / ctx.args.file
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        raise MemoryNotFoundError(f"no such file: {path}") from None
    except NotRegularFileError:
        raise
    except OSError as exc:
        raise MemdirError(f"cannot read {path}: {exc.strerror}") from None
    text = raw.decode("utf-8", errors="replace")
    clean = redact(text)
    if ctx.out.json_mode:
        ctx.out.data({"file": str(path), "findings": len(scan(text)), "text": clean})
    else:
        ctx.out.stdout.write(clean)
    return 0
