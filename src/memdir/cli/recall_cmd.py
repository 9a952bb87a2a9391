"""``memdir recall "query"``: what recall would surface for a prompt, optionally with scores."""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any, TextIO

from memdir import applies_when
from memdir.cli.context import CliContext
from memdir.cli.output import table
from memdir.errors import ConfigError
from memdir.recall.applies_model import write_with_model
from memdir.recall.explain import explain
from memdir.recall.factory import SELECTOR_KINDS, build_recall, local_selector
from memdir.recall.session import RecallSession
from memdir.recall.surface import Attachment


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("recall", help="show the memories recall picks for a query")
    p.add_argument("query")
    p.add_argument("--selector", choices=SELECTOR_KINDS, default=None)
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--explain", action="store_true", help="show scores and why each was kept")
    p.add_argument("--show", action="store_true", help="print the attachments as injected")
    p.add_argument(
        "--embedder",
        choices=("auto", "minilm", "multilingual"),
        default="auto",
        help="auto: MiniLM, or the multilingual model for a dir written mostly in other languages",
    )
    p.set_defaults(handler=cmd_recall)
    r = sub.add_parser("reindex", help="build or refresh the recall search index now")
    r.add_argument("--embedder", choices=("auto", "minilm", "multilingual"), default="auto")
    r.add_argument(
        "--applies-when",
        choices=("rules", "model", "off"),
        default="rules",
        help="write applies_when into memories without one: by rules (default), by the "
        "configured model (memdir.model), or not at all",
    )
    r.set_defaults(handler=cmd_reindex)


class ProgressBar:
    """``embedding 1,234/5,000 (25%), 41/s`` redrawn in place on a terminal; silent otherwise."""

    def __init__(self, stream: TextIO, label: str = "embedding") -> None:
        self.stream = stream
        self.label = label
        self.started = time.monotonic()
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        rate = done / max(time.monotonic() - self.started, 1e-9)
        percent = 100 * done // max(total, 1)
        self.stream.write(f"\r{self.label} {done:,}/{total:,} ({percent}%), {rate:.0f}/s ")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


def _attach_progress(ctx: CliContext, selector: Any) -> ProgressBar | None:
    """A progress bar on the index of a local selector, when stderr is a terminal."""
    index = getattr(selector, "index", None)
    if index is None or not ctx.out.stderr.isatty():
        return None
    bar = ProgressBar(ctx.out.stderr)
    index.progress = bar
    return bar


def _write_applies_when(ctx: CliContext) -> dict[str, Any]:
    mode = ctx.args.applies_when
    if mode == "off":
        return {}
    store = ctx.store()
    if mode == "rules":
        written, problems = applies_when.backfill(store)
        return {"applies_when_written": len(written), "applies_when_problems": problems}
    provider = _provider(ctx)
    if provider is None:
        raise ConfigError("--applies-when model needs a model: set MEMDIR_MODEL (memdir.model)")
    rels = [h.filename for h in store.list()]
    report = asyncio.run(write_with_model(store, provider, rels))
    return {"applies_when_written": len(report.written), "applies_when_skipped": report.skipped}


def cmd_reindex(ctx: CliContext) -> int:
    applies = _write_applies_when(ctx)
    selector = local_selector(
        ctx.memory_dir, ctx.paths.cache_dir, embedder=ctx.args.embedder, background=False
    )
    bar = _attach_progress(ctx, selector)
    try:
        if selector.index.fast is not None:
            selector.index.fast.build()  # once per memdir home (about 30 s), then loaded
        report = selector.refresh()
        searchable = report.seconds
        if bar is not None:  # the second stage: the model reads every memory
            bar.close()
            bar = _attach_progress(ctx, selector)
        selector.complete()
    finally:
        if bar is not None:
            bar.close()
    payload = {
        "embedder": selector.index.embedder.name,
        "fast_stage": selector.index.fast.name if selector.index.fast is not None else None,
        "searchable_seconds": round(searchable, 2),
        "memories": int(selector.index.live_rows().size),
        "added": len(report.added),
        "changed": len(report.changed),
        "removed": len(report.removed),
        "rebuilt": report.rebuilt,
        "seconds": round(report.seconds, 2),
        "problems": report.problems,
        **applies,
    }
    ctx.out.data(payload)
    return 0


def _provider(ctx: CliContext) -> Any:
    spec = ctx.settings.model
    if not spec:
        return None
    from memdir.llm.factory import provider_from_spec

    return provider_from_spec(spec, ctx.env)


def cmd_recall(ctx: CliContext) -> int:
    a = ctx.args
    kind = a.selector or ctx.settings.recall_selector or "auto"
    if a.explain and kind != "llm":
        return _explain(ctx)
    provider = _provider(ctx) if kind in ("auto", "llm") else None
    attachments = _from_daemon(ctx) if provider is None and kind in ("auto", "local") else None
    if attachments is None:
        recall = build_recall(
            ctx.memory_dir,
            ctx.paths.cache_dir,
            kind=kind,
            provider=provider,
            embedder=a.embedder,
            background=False,  # one answer, then exit: `reindex` or a long-lived host fills
        )
        bar = _attach_progress(ctx, recall.ranker or recall.selector)
        try:
            attachments = asyncio.run(recall.recall(a.query, RecallSession(), limit=a.limit))
        finally:
            if bar is not None:
                bar.close()
    checked = _evidence(ctx, [att.path for att in attachments])
    rows = [
        {
            "path": att.filename,
            "bytes": att.size,
            "truncated": att.truncated,
            "header": att.header,
            "evidence": ev.report(),
            "held_back": ev.held_back,
            "verdict": "held back" if ev.held_back else ev.state or "-",
        }
        for att, ev in zip(attachments, checked, strict=True)
    ]
    if a.show:
        shown = []
        for att, ev in zip(attachments, checked, strict=True):
            text = ev.shown(att.content, att.filename.removesuffix(".md"), att.filename)
            shown.append(text if ev.held_back else f"{att.header}\n{text}")
        text = "\n\n".join(shown) or "(nothing relevant)"
    else:
        columns = ["path", "bytes", "truncated", "verdict"]
        text = table(rows, columns) if rows else "(nothing relevant)"
    payload = [{**r, "content": att.content} for r, att in zip(rows, attachments, strict=True)]
    ctx.out.data(payload, text)
    return 0


# a CLI user waits anyway: the daemon gets this long (a load under way) before the command
# recalls in its own process instead
DAEMON_WAIT = 30.0


def _from_daemon(ctx: CliContext) -> list[Attachment] | None:
    """The warm recall daemon's answer (the hooks' own engine, its index loaded and read by the
    model), when one is up for this memdir home; None to recall in this process: no daemon
    (the command never starts one), another embedder asked for, ``MEMDIR_HOOK_DAEMON=0``, or
    any failure of the daemon."""
    from memdir.adapters import recall_client
    from memdir.errors import DaemonError

    off = ctx.env.get("MEMDIR_HOOK_DAEMON", "").strip().lower() in ("0", "false", "no", "off")
    if ctx.args.embedder != "auto" or off:
        return None
    sock = recall_client.socket_path(ctx.settings.memdir_home)
    if not sock.exists():
        return None
    try:
        found = recall_client.recall(
            sock,
            memory_dir=ctx.memory_dir,
            cache_dir=ctx.paths.cache_dir,
            query=ctx.args.query,
            exclude=[],
            limit=ctx.args.limit,
            timeout=DAEMON_WAIT,
        )
        return [
            Attachment(Path(d["path"]), d["filename"], d["header"], d["content"], d["truncated"])
            for d in found
        ]
    except (DaemonError, KeyError, TypeError):
        return None


def _evidence(ctx: CliContext, paths: list[Any]) -> list[Any]:
    """Each recalled memory's evidence (memdir.evidence); empty ones when switched off."""
    from memdir.evidence import Evidence, screen
    from memdir.evidence.service import enabled

    if not enabled(ctx.env):
        return [Evidence(skipped=["MEMDIR_EVIDENCE is off"]) for _ in paths]
    screened = screen([str(p) for p in paths], ctx.paths.project_root, ctx.paths.cache_dir)
    return [s.evidence for s in screened]


def _explain(ctx: CliContext) -> int:
    selector = local_selector(
        ctx.memory_dir, ctx.paths.cache_dir, embedder=ctx.args.embedder, background=False
    )
    bar = _attach_progress(ctx, selector)
    headers = ctx.store().scan(limit=None).headers
    explained = explain(selector, headers, ctx.args.query, limit=ctx.args.limit, top=20)
    if bar is not None:
        bar.close()
    rows = [
        {
            "rank": e.rank,
            "path": e.filename,
            "lexical": round(e.lexical, 3),
            "semantic": round(e.semantic, 3),
            "fused": round(e.fused, 3),
            "selected": e.selected,
            "why": e.reason,
            "semantic_by": e.semantic_by,
        }
        for e in explained
    ]
    checked = _evidence(ctx, [ctx.memory_dir / str(r["path"]) for r in rows if r["selected"]])
    for row, ev in zip([r for r in rows if r["selected"]], checked, strict=True):
        row["evidence"], row["held_back"] = ev.report(), ev.held_back
        row["evidence_skipped"] = ev.skipped
        if ev.held_back or ev.stale:
            row["why"] = f"{row['why']}; evidence: " + ("held back" if ev.held_back else ev.state)
    columns = ["rank", "path", "lexical", "semantic", "fused", "selected", "why"]
    note = selector.status().note()  # how much the model has read: the rest is the fast stage
    ctx.out.data(rows, f"{table(rows, columns)}\n{note}" if rows else note)
    return 0
