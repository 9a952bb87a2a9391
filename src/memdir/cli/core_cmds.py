"""Core commands: where, init, list, show, add, edit, rm, mv, index, manifest, prompt, doctor."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from memdir import applies_when, frontmatter
from memdir.age import memory_age
from memdir.cli.context import CliContext
from memdir.cli.output import table
from memdir.errors import ConfigError
from memdir.index import ENTRYPOINT_NAME
from memdir.model import MEMORY_TYPES
from memdir.scan import format_manifest, manifest_line


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("where", help="show every resolved path and which setting decided it")
    p.set_defaults(handler=cmd_where)

    p = sub.add_parser("init", help="create the memory dir and an empty MEMORY.md")
    p.set_defaults(handler=cmd_init)

    p = sub.add_parser("list", help="list memories, newest first")
    p.add_argument("--type", choices=MEMORY_TYPES)
    p.add_argument("--limit", type=int, default=None)
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("show", help="print one memory file")
    p.add_argument("path")
    p.set_defaults(handler=cmd_show)

    for name in ("add", "write"):
        p = sub.add_parser(name, help="write a memory (body from --body, --body-file or stdin)")
        p.add_argument("name")
        p.add_argument("-d", "--description", required=True)
        p.add_argument("-t", "--type", required=True, choices=MEMORY_TYPES)
        p.add_argument("-b", "--body")
        p.add_argument("--body-file", type=argparse.FileType("r", encoding="utf-8"))
        p.add_argument("--path", help="relative file name (default: from the name)")
        p.add_argument("--force", action="store_true", help="replace an existing file")
        p.add_argument(
            "--applies-when",
            action="append",
            metavar="SITUATION",
            help=f"a request this memory governs (repeat, up to {applies_when.MAX_ITEMS}; "
            "default: derived by rules)",
        )
        p.set_defaults(handler=cmd_add)

    p = sub.add_parser("edit", help="replace an exact string in a memory")
    p.add_argument("path")
    p.add_argument("--old", required=True)
    p.add_argument("--new", required=True)
    p.add_argument("--all", action="store_true", help="replace every occurrence")
    p.set_defaults(handler=cmd_edit)

    p = sub.add_parser("rm", help="delete a memory (and its index line)")
    p.add_argument("path")
    p.set_defaults(handler=cmd_rm)

    p = sub.add_parser("mv", help="rename a memory (and its index line)")
    p.add_argument("old")
    p.add_argument("new")
    p.set_defaults(handler=cmd_mv)

    p = sub.add_parser("index", help="check or rebuild MEMORY.md")
    isub = p.add_subparsers(dest="index_command", metavar="<check|rebuild>", required=True)
    isub.add_parser("check", help="report drift (exit 1 if any)").set_defaults(
        handler=cmd_index_check
    )
    isub.add_parser("rebuild", help="regenerate entries from frontmatter").set_defaults(
        handler=cmd_index_rebuild
    )

    p = sub.add_parser("manifest", help="print the recall manifest")
    p.add_argument("--limit", type=int, default=200)
    p.set_defaults(handler=cmd_manifest)

    p = sub.add_parser("prompt", help="print the memory section of the system prompt")
    p.add_argument(
        "--mode", choices=("auto", "individual", "combined", "daily-log"), default="auto"
    )
    p.add_argument("--skip-index", action="store_true", help="leave out the MEMORY.md step")
    p.set_defaults(handler=cmd_prompt)

    p = sub.add_parser("doctor", help="check the memory dir for problems (exit 1 if any)")
    p.add_argument(
        "--fix",
        nargs="*",
        metavar="PATH",
        help="repair these files' headers (no PATH: every repairable problem listed)",
    )
    p.set_defaults(handler=cmd_doctor)


def cmd_where(ctx: CliContext) -> int:
    paths = ctx.paths.as_dict()
    settings = ctx.settings
    payload: dict[str, Any] = {
        "paths": paths,
        "decided_by": dict(ctx.paths.decided_by),
        "enabled": settings.auto_memory_enabled,
        "enabled_because": settings.sources.get("auto_memory_enabled", "default"),
    }
    lines = [f"{k:16} {v}" for k, v in paths.items()]
    lines.append(f"{'enabled':16} {payload['enabled']} ({payload['enabled_because']})")
    lines += ["", "decided by:"] + [f"  {k:14} {v}" for k, v in payload["decided_by"].items()]
    ctx.out.data(payload, "\n".join(lines))
    return 0


def cmd_init(ctx: CliContext) -> int:
    store = ctx.store()
    with store.lock():
        entry = store.root / ENTRYPOINT_NAME
        created = not entry.exists()
        if created:
            store.write_text(ENTRYPOINT_NAME, "", create_only=True)
    payload = {"memory_dir": str(store.root), "created_index": created}
    ctx.out.data(payload, f"memory dir ready: {store.root}")
    return 0


def _header_row(h: Any, now: float) -> dict[str, Any]:
    return {
        "path": h.filename,
        "type": h.type,
        "age": memory_age(h.mtime, now),
        "description": h.description,
    }


def cmd_list(ctx: CliContext) -> int:
    result = ctx.store().scan(limit=None)
    headers = [h for h in result.headers if ctx.args.type is None or h.type == ctx.args.type]
    if ctx.args.limit is not None:
        headers = headers[: ctx.args.limit]
    now = time.time()
    rows = [_header_row(h, now) for h in headers]
    for issue in result.errors:
        ctx.out.warn(f"skipped {issue.path}: {issue.reason}")
    ctx.out.data(rows, table(rows, ["path", "type", "age", "description"]))
    return 0


def cmd_show(ctx: CliContext) -> int:
    store = ctx.store()
    text = store.read_text(ctx.args.path)
    if ctx.out.json_mode:
        memory = frontmatter.parse_memory(text, store.rel(ctx.args.path))
        ctx.out.data(
            {
                "path": memory.path,
                "name": memory.name,
                "description": memory.description,
                "type": memory.type,
                "created": memory.created,
                "updated": memory.updated,
                "body": memory.body,
                "hash": store.file_hash(memory.path),
            }
        )
    else:
        ctx.out.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_add(ctx: CliContext) -> int:
    a = ctx.args
    if a.body is not None:
        body = a.body
    elif a.body_file is not None:
        body = a.body_file.read()
    elif not sys.stdin.isatty():
        body = sys.stdin.read()
    else:
        raise ConfigError("give the body with --body, --body-file or on stdin")
    # A person's own list is stored as given; without one the rules derive it (docs/recall.md).
    given = applies_when.as_given(a.applies_when or [])
    situations = (
        {applies_when.FIELD: given}
        if given
        else applies_when.initial(a.type, a.name, a.description, body)
    )
    memory = ctx.store().create(
        a.name, a.description, a.type, body, rel=a.path, overwrite=bool(a.force), extra=situations
    )
    ctx.out.data({"path": memory.path, "name": memory.name}, f"saved {memory.path}")
    return 0


def cmd_edit(ctx: CliContext) -> int:
    a = ctx.args
    rel = ctx.store().edit(a.path, a.old, a.new, replace_all=bool(a.all))
    ctx.out.data({"path": rel}, f"edited {rel}")
    return 0


def cmd_rm(ctx: CliContext) -> int:
    rel = ctx.store().delete(ctx.args.path)
    ctx.out.data({"deleted": rel}, f"deleted {rel}")
    return 0


def cmd_mv(ctx: CliContext) -> int:
    rel = ctx.store().rename(ctx.args.old, ctx.args.new)
    ctx.out.data({"renamed": ctx.args.old, "to": rel}, f"renamed {ctx.args.old} -> {rel}")
    return 0


def _report_dicts(ctx: CliContext) -> list[dict[str, Any]]:
    from memdir.doctor import index_reports

    return index_reports(ctx.store())


def _render_reports(reports: list[dict[str, Any]]) -> str:
    lines = []
    for r in reports:
        lines.append(f"{r['index']}: {'ok' if r['ok'] else 'problems found'}")
        for key in ("dead_links", "unindexed", "duplicates", "long_lines"):
            for item in r[key]:
                lines.append(f"  {key.replace('_', ' ')[:-1]}: {item}")
        if r["over_limit"]:
            lines.append(f"  over limit: {r['over_limit']}")
    return "\n".join(lines)


def cmd_index_check(ctx: CliContext) -> int:
    reports = _report_dicts(ctx)
    ctx.out.data(reports, _render_reports(reports))
    return 0 if all(r["ok"] for r in reports) else 1


def cmd_index_rebuild(ctx: CliContext) -> int:
    written = ctx.store().rebuild_index()
    ctx.out.data({"rewritten": written}, "rewrote " + (", ".join(written) or "nothing"))
    return 0


def cmd_manifest(ctx: CliContext) -> int:
    result = ctx.store().scan(limit=ctx.args.limit)
    for issue in result.errors:
        ctx.out.warn(f"skipped {issue.path}: {issue.reason}")
    rows = [{"line": manifest_line(h), "path": h.filename} for h in result.headers]
    ctx.out.data(rows, format_manifest(result.headers) or "(no memories)")
    return 0


def cmd_prompt(ctx: CliContext) -> int:
    from memdir.prompts import build_prompt_for_paths

    text = build_prompt_for_paths(
        ctx.paths, ctx.settings, mode=ctx.args.mode, skip_index=bool(ctx.args.skip_index)
    )
    if not text:
        reason = ctx.settings.sources.get("auto_memory_enabled", "settings")
        ctx.out.warn(f"memory is disabled ({reason}); no prompt section")
    ctx.out.data({"prompt": text}, text)
    return 0


DOCTOR_EVIDENCE_SECONDS = 20.0


def cmd_doctor(ctx: CliContext) -> int:
    from memdir import repair
    from memdir.doctor import diagnose

    store = ctx.store()
    fixed: list[dict[str, Any]] = []
    if ctx.args.fix is not None:
        done = repair.fix(store, list(ctx.args.fix), everything=not ctx.args.fix)
        fixed = [{"path": f.path, "action": f.action, "ok": f.ok} for f in done]
    diagnosis = diagnose(store)
    summary = diagnosis.as_dict()
    # Host installs are an adapter concern: the CLI adds them to the library's diagnosis.
    problems = [*diagnosis.problems, *_install_problems(ctx)]
    summary["problems"] = problems
    if ctx.args.fix is not None:
        summary["fixed"] = fixed
    from memdir.cli.status_cmd import installed_summary, runs_label

    summary["hosts"] = hosts = installed_summary(ctx)
    text = [f"memory dir: {store.root}", f"memories:   {diagnosis.memories}"]
    for h in hosts:
        runs = runs_label(h)
        if h["where"] == "here":
            text.append(f"installed:  {h['host']} ({runs})")
            if h["untested"]:
                text.append(f"            {h['host']}: {h['untested']}")
    others = sorted({h["host"] for h in hosts if h["where"] != "here"})
    if others:
        text.append(f"elsewhere:  other repositories have {', '.join(others)} (not checked here)")
    text += [f"{'fixed' if f['ok'] else 'not fixed':22} {f['path']}  {f['action']}" for f in fixed]
    text += [f"{p['kind']:22} {p['path']}  {p['detail']}".rstrip() for p in problems]
    text += [f"{i['status']:22} {i['path']}  {i['reason']}" for i in diagnosis.inactive]
    text += [
        f"{'partly indexed':22} {p['path']}  recall searches its first {p['indexed_bytes']:,} "
        f"of {p['bytes']:,} bytes"
        for p in diagnosis.partly_indexed
    ]
    summary["stale"] = stale = _stale(ctx, store)
    if stale:
        held = sum(1 for s in stale if s["held_back"])
        text.append(
            f"{'stale':22} {len(stale)} memories name code that changed since "
            f"({held} held back from injection): `memdir stale`"
        )
    text.append("no problems found" if not problems else f"{len(problems)} problem(s)")
    ctx.out.data(summary, "\n".join(text))
    return 1 if problems else 0


def _stale(ctx: CliContext, store: Any) -> list[dict[str, Any]]:
    """Memories whose anchors changed, moved or are gone (memdir.evidence): not problems of the
    dir, so they do not change the exit status; ``memdir stale`` reviews them."""
    from memdir.evidence import screen
    from memdir.evidence.service import enabled

    if not enabled(ctx.env):
        return []
    headers = store.list()
    paths = [h.path for h in headers]
    root, cache = ctx.paths.project_root, ctx.paths.cache_dir
    checked = screen(paths, root, cache, budget=DOCTOR_EVIDENCE_SECONDS)
    return [
        {"path": h.filename, "state": c.evidence.state, "held_back": c.evidence.held_back}
        for h, c in zip(headers, checked, strict=True)
        if c.evidence.stale
    ]


def _install_problems(ctx: CliContext) -> list[dict[str, str]]:
    """Installed hooks and MCP servers whose program the host would not find (exit 127), and
    memdir active in Claude Code twice."""
    from memdir.adapters.hooks.install import InstallRecord
    from memdir.adapters.hooks.resolve import installed_problems
    from memdir.adapters.hosts.claude_code.duplicates import doctor_problems
    from memdir.cli.installs_here import locations, split_record
    from memdir.errors import InstallError

    loc = locations(ctx)
    problems = doctor_problems(loc.claude_config_dir, loc.project_root)
    try:
        record = InstallRecord(ctx.settings.memdir_home).load()
    except InstallError as exc:
        return [*problems, {"kind": "install-record", "path": "installs.json", "detail": str(exc)}]
    record, _elsewhere = split_record(record, ctx)  # another repository's are not ours to check
    hosts = {str(a.get("host")) for a in record.values() if isinstance(a, dict) and a.get("host")}
    from memdir.adapters.hosts import installable, names

    for host in sorted(hosts & set(names())):
        problems += installable(host).problems(loc)
    return [*problems, *installed_problems(record, ctx.env)]
