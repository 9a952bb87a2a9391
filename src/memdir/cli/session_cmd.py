"""``memdir compact`` and ``memdir session show|update``: the compaction ladder from a shell.

``compact`` reads a transcript, compacts it for a window (offline session-memory compaction by
default, the configured model's summary with ``--llm``) and prints the conversation the model
would see next plus a report. It does not change the transcript unless ``--append`` is given.
``session show`` prints a session's notes file; ``session update`` brings it up to date offline.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from memdir.cli.context import CliContext
from memdir.cli.output import table
from memdir.errors import ConfigError, MemoryNotFoundError, ProviderConfigError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("compact", help="compact a conversation transcript to fit a context window")
    p.add_argument("transcript", type=Path, help="a session transcript (.jsonl)")
    p.add_argument("--window", type=int, default=200_000, help="context window in tokens")
    p.add_argument(
        "--max-output", type=int, default=20_000, help="the model's max output tokens (reserve)"
    )
    p.add_argument("--llm", action="store_true", help="summarise with the configured model")
    p.add_argument("--model", help="provider spec for --llm (default: MEMDIR_MODEL)")
    p.add_argument("--notes", type=Path, help="session notes file (default: beside the transcript)")
    p.add_argument("--append", action="store_true", help="append the compaction to the transcript")
    p.set_defaults(handler=cmd_compact)

    s = sub.add_parser("session", help="session notes (session memory)")
    ssub = s.add_subparsers(dest="session_command", metavar="<subcommand>", required=True)
    show = ssub.add_parser("show", help="print a session's notes file")
    show.add_argument("session", nargs="?", help="session id, transcript or notes path")
    show.set_defaults(handler=cmd_show)
    update = ssub.add_parser("update", help="update a session's notes offline from its transcript")
    update.add_argument("session", nargs="?", help="session id or transcript path")
    update.set_defaults(handler=cmd_update)


def notes_path_for(transcript: Path) -> Path:
    """The reference layout: ``<dir>/<session id>/session-memory/summary.md``."""
    return transcript.with_suffix("") / "session-memory" / "summary.md"


def _abs(ctx: CliContext, path: Path) -> Path:
    return path if path.is_absolute() else ctx.cwd / path


def _resolve_transcript(ctx: CliContext, session: str | None) -> Path:
    from memdir.transcripts import list_sessions

    if session is None:
        sessions = list_sessions(ctx.paths.transcripts_dir)
        if not sessions:
            raise MemoryNotFoundError(f"no session transcripts in {ctx.paths.transcripts_dir}")
        return sessions[0].path
    candidate = _abs(ctx, Path(session))
    if candidate.suffix == ".jsonl" or candidate.exists():
        return candidate
    return ctx.paths.transcript_path(session)


def cmd_compact(ctx: CliContext) -> int:
    from memdir.session.compactor import Compactor
    from memdir.session.convert import load_transcript
    from memdir.session.memory import SessionMemory
    from memdir.session.messages import repair, to_api
    from memdir.session.offline import OfflineUpdater
    from memdir.transcripts import Transcript

    args = ctx.args
    if args.window < 1_000:
        raise ConfigError("--window must be at least 1000 tokens")
    path = _abs(ctx, args.transcript)
    messages, issues = load_transcript(path)
    messages, fixes = repair(messages)
    for issue in [*issues, *fixes]:
        ctx.out.warn(f"{path}: {issue}")
    if not messages:
        raise MemoryNotFoundError(f"{path} holds no conversation to compact")
    provider = None
    memory = None
    if args.llm:
        spec = args.model or ctx.settings.model
        if not spec:
            raise ProviderConfigError("--llm needs a model: pass --model or set MEMDIR_MODEL")
        from memdir.llm.factory import provider_from_spec

        provider = provider_from_spec(spec, ctx.env)
    else:
        from memdir.session.notes import config_dir, load_template

        notes = _abs(ctx, args.notes) if args.notes else notes_path_for(path)
        template = load_template(config_dir(ctx.settings.home))
        memory = SessionMemory(notes, OfflineUpdater(), template=template)
    transcript = None
    if args.append:
        transcript = Transcript.resume(path, session_id=path.stem, cwd=str(ctx.cwd))
    compactor = Compactor(
        session_memory=memory,
        provider=provider,
        transcript=transcript,
        max_output_tokens=args.max_output,
    )
    result = asyncio.run(compactor.maybe_compact(messages, args.window, force=True))
    report = result.report.as_dict()
    if memory is not None:
        report["notes_path"] = str(memory.path)
    payload: dict[str, Any] = {"report": report, "messages": to_api(result.messages)}
    ctx.out.data(payload, _render(payload))
    # Success means the conversation shrank: a compaction that summarised nothing only added a
    # summary in front of the same messages (the docs promise exit 2 for "nothing compacted").
    shrank = report["summarized_messages"] > 0 and report["tokens_after"] < report["tokens_before"]
    if result.compacted and not shrank:
        ctx.out.warn(
            f"nothing was summarised ({report['tokens_before']} -> {report['tokens_after']} "
            "tokens): the conversation already fits the window"
        )
    return 0 if result.compacted and shrank else 2


def _render(payload: dict[str, Any]) -> str:
    r = payload["report"]
    rows = [
        {"field": "rung", "value": r["rung"]},
        {"field": "tokens", "value": f"{r['tokens_before']} -> {r['tokens_after']}"},
        {"field": "threshold", "value": f"{r['threshold']} (window {r['context_window']})"},
        {"field": "kept", "value": f"{r['kept_messages']} messages from {r['kept_from_uuid']}"},
        {"field": "summarised", "value": f"{r['summarized_messages']} messages"},
    ]
    for key in ("fallback_reason", "error", "notes_path"):
        if r.get(key):
            rows.append({"field": key.replace("_", " "), "value": r[key]})
    lines = [table(rows, ["field", "value"]), ""]
    for m in payload["messages"]:
        for block in m["content"]:
            lines.append(f"{m['role']:>9}: {_preview(block)}")
    return "\n".join(lines)


def _preview(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        text = " ".join(str(block.get("text", "")).split())
    elif kind == "tool_use":
        text = f"[tool_use {block.get('name')}] {block.get('input')}"
    elif kind == "tool_result":
        text = f"[tool_result] {block.get('content')}"
    else:
        text = f"[{kind}]"
    return text if len(text) <= 160 else text[:159] + "…"


def _newest_notes(ctx: CliContext) -> Path | None:
    """The notes most recently written in this project: a host's sessions (the hooks) leave
    notes here but their transcripts in the host's own dir, so the newest transcript of
    memdir's dir is not the session the user just finished."""
    found = []
    for path in ctx.paths.transcripts_dir.glob("*/session-memory/summary.md"):
        try:
            found.append((path.stat().st_mtime, path))
        except OSError:  # removed while listing
            continue
    return max(found)[1] if found else None


def cmd_show(ctx: CliContext) -> int:
    from memdir.session.notes import parse_notes, read_notes

    raw = ctx.args.session
    if raw and raw.endswith(".md"):
        notes_path = _abs(ctx, Path(raw))
    elif raw is None and (newest := _newest_notes(ctx)) is not None:
        notes_path = newest
    else:
        notes_path = notes_path_for(_resolve_transcript(ctx, raw))
    text = read_notes(notes_path)
    if text is None:
        raise MemoryNotFoundError(
            f"no session notes at {notes_path} (run `memdir session update` to create them)"
        )
    notes = parse_notes(text)
    payload = {
        "notes_path": str(notes_path),
        "intact": notes.intact,
        "tokens": notes.total_tokens,
        "notes": text,
    }
    ctx.out.data(payload, text)
    return 0


def cmd_update(ctx: CliContext) -> int:
    from memdir.session.notes import config_dir, load_template
    from memdir.session.offline import update_notes_from_transcript

    transcript = _resolve_transcript(ctx, ctx.args.session)
    if not transcript.is_file():
        raise MemoryNotFoundError(f"no transcript at {transcript}")
    notes_path = notes_path_for(transcript)
    template = load_template(config_dir(ctx.settings.home))
    outcome = update_notes_from_transcript(transcript, notes_path, template=template)
    payload = {"notes_path": str(notes_path), **vars(outcome)}
    verb = "updated" if outcome.changed else "unchanged"
    ctx.out.data(payload, f"{notes_path}: {verb} ({outcome.notes_tokens} tokens)")
    return 0 if outcome.ok else 2
