"""``memdir recall "query"``: what recall would surface for a prompt, optionally with scores."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from memdir.cli.context import CliContext
from memdir.cli.output import table
from memdir.recall.factory import SELECTOR_KINDS, build_recall, local_selector
from memdir.recall.session import RecallSession


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("recall", help="show the memories recall picks for a query")
    p.add_argument("query")
    p.add_argument("--selector", choices=SELECTOR_KINDS, default=None)
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--explain", action="store_true", help="show scores and why each was kept")
    p.add_argument("--show", action="store_true", help="print the attachments as injected")
    p.set_defaults(handler=cmd_recall)


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
    recall = build_recall(ctx.memory_dir, ctx.paths.cache_dir, kind=kind, provider=provider)
    attachments = asyncio.run(recall.recall(a.query, RecallSession(), limit=a.limit))
    rows = [
        {"path": att.filename, "bytes": att.size, "truncated": att.truncated, "header": att.header}
        for att in attachments
    ]
    if a.show:
        text = "\n\n".join(att.text for att in attachments) or "(nothing relevant)"
    else:
        text = table(rows, ["path", "bytes", "truncated"]) if rows else "(nothing relevant)"
    payload = [{**r, "content": att.content} for r, att in zip(rows, attachments, strict=True)]
    ctx.out.data(payload, text)
    return 0


def _explain(ctx: CliContext) -> int:
    selector = local_selector(ctx.memory_dir, ctx.paths.cache_dir)
    rows = [
        {
            "rank": e.rank,
            "path": e.filename,
            "lexical": round(e.lexical, 3),
            "semantic": round(e.semantic, 3),
            "fused": round(e.fused, 3),
            "selected": e.selected,
            "why": e.reason,
        }
        for e in selector.explain(ctx.args.query, limit=ctx.args.limit, top=20)
    ]
    columns = ["rank", "path", "lexical", "semantic", "fused", "selected", "why"]
    ctx.out.data(rows, table(rows, columns))
    return 0
