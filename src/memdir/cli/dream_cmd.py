"""``memdir dream`` (consolidate now), ``dream status``, ``dream undo``, ``memdir log``,
``memdir retire``.

``memdir dream`` runs a dream now, past the time and session gates (a manual run, as in the
reference) but never past a live consolidation lock; ``--auto`` applies the gates (for cron);
``--dry-run`` prints the planned changes as a unified diff and writes nothing. Offline is the
default; ``--llm`` runs the sandboxed dream agent with ``--model`` or ``MEMDIR_MODEL``.
"""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any

from memdir.cli.context import CliContext
from memdir.consolidate import factory
from memdir.consolidate.base import Dreamer
from memdir.consolidate.offline import OfflineDreamer
from memdir.consolidate.run import maybe_dream_sync
from memdir.errors import MissingExtraError, ProviderConfigError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("dream", help="consolidate memories now (merge, fix dates, repair index)")
    p.add_argument("--dry-run", action="store_true", help="print the planned changes as a diff")
    p.add_argument("--auto", action="store_true", help="run only if the dream gates are open")
    p.add_argument(
        "--force", action="store_true", help="take over a consolidation lock held by a live process"
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--offline", dest="mode", action="store_const", const="offline")
    mode.add_argument("--llm", dest="mode", action="store_const", const="llm")
    p.add_argument("--model", help="provider spec for --llm (default: MEMDIR_MODEL)")
    p.add_argument("--no-embeddings", action="store_true", help="lexical duplicate check only")
    p.set_defaults(handler=cmd_dream, mode="offline")
    actions = p.add_subparsers(dest="dream_action", metavar="[status|undo]")
    status = actions.add_parser("status", help="gates, lock holder, last run and what it changed")
    status.set_defaults(handler=cmd_status)
    undo = actions.add_parser("undo", help="restore the memory dir as it was before the last dream")
    undo.add_argument("--id", help="a snapshot id from `memdir dream status` (default: the last)")
    undo.add_argument("--force", action="store_true", help="even over edits made after the dream")
    undo.set_defaults(handler=cmd_undo)

    log = sub.add_parser("log", help="append a timestamped bullet to today's daily log")
    log.add_argument("text", nargs="+", help="what to log (one line)")
    log.set_defaults(handler=cmd_log)

    retire = sub.add_parser("retire", help="forget a memory with a reason (kept on disk, unlisted)")
    retire.add_argument("name", help="memory file, relative to the memory dir")
    retire.add_argument("--reason", required=True, help="why it is no longer true or wanted")
    retire.add_argument("--superseded-by", help="the memory that replaces it")
    retire.set_defaults(handler=cmd_retire)


def _embedder(ctx: CliContext) -> Any:
    if ctx.args.no_embeddings:
        return None
    try:
        from memdir.recall.embed import MiniLMEmbedder

        embedder = MiniLMEmbedder()
        embedder.embed(["probe"])  # fails fast when the optional model is not installed
        return embedder
    except (ImportError, MissingExtraError):
        return None


def _progress(ctx: CliContext) -> Any:
    stream = ctx.out.stderr
    if ctx.out.json_mode or not stream.isatty():
        return None

    def show(done: int, total: int, rel: str) -> None:
        stream.write(f"\rdream: {done}/{total} files {rel[:50]:<50}")
        if done == total:
            stream.write("\n")
        stream.flush()

    return show


def _offline(ctx: CliContext) -> OfflineDreamer:
    store = ctx.store()
    return OfflineDreamer(
        store,
        factory.snapshots(store, ctx.paths),
        project_root=ctx.paths.project_root,
        embedder=_embedder(ctx),
        progress=_progress(ctx),
    )


def _llm(ctx: CliContext) -> Dreamer:
    spec = ctx.args.model or ctx.settings.model
    if not spec:
        raise ProviderConfigError("--llm needs a model: pass --model or set MEMDIR_MODEL")
    from memdir.consolidate.agent import AgentDreamer
    from memdir.llm.factory import provider_from_spec

    store = ctx.store()
    return AgentDreamer(
        provider_from_spec(spec, ctx.env),
        store,
        factory.snapshots(store, ctx.paths),
        transcripts_dir=ctx.paths.transcripts_dir,
        cwd=ctx.cwd,
    )


def cmd_dream(ctx: CliContext) -> int:
    if ctx.args.dry_run:
        return _dry_run(ctx)
    gate = factory.dream_gate(ctx.settings, ctx.paths)
    if ctx.args.force:
        gate.lock.stale_after = 0.0  # a live holder no longer blocks
    dreamer = _llm(ctx) if ctx.args.mode == "llm" else _offline(ctx)
    outcome = maybe_dream_sync(gate, dreamer, force=not ctx.args.auto)
    payload: dict[str, Any] = {"ran": outcome.ran, "reason": outcome.reason}
    if outcome.gate is not None:
        payload["gate"] = {"reason": outcome.gate.reason, "detail": outcome.gate.detail}
    if outcome.report is not None:
        payload.update(outcome.report.as_dict())
    ctx.out.data(payload, _dream_text(outcome.reason, payload))
    return 0 if outcome.reason in ("ran", "gate-closed") else 2


def _dream_text(reason: str, payload: dict[str, Any]) -> str:
    if reason == "gate-closed":
        return f"not due: {payload['gate']['detail']} (run without --auto to dream now)"
    if reason == "locked":
        return "another dream holds the consolidation lock; try again later (or --force)"
    if reason == "failed":
        return f"dream failed, nothing kept: {payload.get('error')}"
    lines = [payload.get("notice") or "Nothing to improve."]
    lines += [f"  ~ {rel}" for rel in payload.get("changed", [])]
    lines += [f"  - {rel} (retired)" for rel in payload.get("retired", [])]
    lines += [f"  ? {item}" for item in payload.get("flagged", [])]
    if payload.get("snapshot"):
        lines.append("undo with: memdir dream undo")
    return "\n".join(lines)


def _dry_run(ctx: CliContext) -> int:
    dreamer = _offline(ctx)
    if ctx.args.mode == "llm":
        ctx.out.warn("--dry-run shows the offline plan; an LLM dream cannot be previewed")
    plan, _, _ = dreamer.plan()
    diff = plan.diff()
    summary = plan.summary()
    if ctx.out.json_mode:
        ctx.out.data({"diff": diff, "plan": summary})
        return 0
    out = [diff.rstrip("\n")] if diff else ["No changes planned."]
    for c in plan.flagged:
        out.append(f"# contradiction (left for you): {c.older} vs {c.newer}: {c.detail}")
    distill = summary.get("distill", {})
    for item in distill.get("would_save", []):
        out.append(f"# would distil from daily logs: {item}")
    ctx.out.data(summary, "\n".join(out))
    return 0


def cmd_status(ctx: CliContext) -> int:
    lock = factory.consolidation_lock(ctx.paths)
    recovered = lock.recover()
    gate = factory.dream_gate(ctx.settings, ctx.paths)
    result = gate.check(current_session=None)
    state = lock.state()
    runs = factory.snapshots(ctx.store(), ctx.paths).summaries(limit=5)
    last = (
        dt.datetime.fromtimestamp(state.mtime).astimezone().isoformat(timespec="seconds")
        if state.exists
        else None
    )
    payload = {
        "enabled": gate.enabled,
        "gate": {"open": result.open, "reason": result.reason, "detail": result.detail},
        "lock": {"path": str(lock.path), "holder_pid": state.pid, "holder_alive": state.alive},
        "last_consolidated": last,
        "recovered_killed_run": recovered,
        "runs": runs,
    }
    text = [
        f"auto dream:        {'on' if gate.enabled else 'off (autoDreamEnabled)'}",
        f"gate:              {result.reason} — {result.detail}",
        f"last consolidated: {last or 'never'}",
        f"lock holder:       {state.pid or '-'} ({'alive' if state.alive else 'not running'})",
    ]
    if recovered:
        text.append("rolled back the lock of a dream that was killed")
    for run in runs:
        mark = " (undone)" if run["undone"] else "" if run["finished"] else " (interrupted)"
        text.append(f"run {run['id']}: {run['reason']}, {len(run['changed'])} file(s){mark}")
        text += [f"    {rel}" for rel in run["changed"][:20]]
    ctx.out.data(payload, "\n".join(text))
    return 0


def cmd_undo(ctx: CliContext) -> int:
    store = ctx.store()
    result = factory.snapshots(store, ctx.paths).undo(ctx.args.id, force=ctx.args.force)
    payload = {
        "snapshot": result.snapshot,
        "restored": result.restored,
        "removed": result.removed,
        "redo_snapshot": result.safety_snapshot,
    }
    text = [f"restored the memory dir as it was before dream {result.snapshot}"]
    text += [f"  < {rel}" for rel in result.restored]
    text += [f"  - {rel} (created by the dream)" for rel in result.removed]
    text.append(f"to redo: memdir dream undo --id {result.safety_snapshot}")
    ctx.out.data(payload, "\n".join(text))
    return 0


def cmd_log(ctx: CliContext) -> int:
    from memdir.daily_log import append_log

    path = append_log(ctx.memory_dir, " ".join(ctx.args.text))
    ctx.out.data({"log": str(path)}, f"logged to {path}")
    return 0


def cmd_retire(ctx: CliContext) -> int:
    from memdir.consolidate.forget import retire

    rel = retire(
        ctx.store(), ctx.args.name, reason=ctx.args.reason, superseded_by=ctx.args.superseded_by
    )
    ctx.out.data({"retired": rel, "reason": ctx.args.reason}, f"retired {rel}: {ctx.args.reason}")
    return 0
