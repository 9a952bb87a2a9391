"""``memdir extract <transcript.jsonl> [--rules | --llm]``: extract memories from a saved session.

Rules (the default) need no model; ``--llm`` runs the sandboxed extraction agent with the model
from ``--model`` or ``MEMDIR_MODEL``. Either way every change goes through the memory store, and
the command prints what was saved and removed.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

from memdir.cli.context import CliContext
from memdir.errors import ProviderConfigError
from memdir.extract.base import ExtractionResult, Extractor
from memdir.extract.transcript import turns_from_entries
from memdir.transcripts import read_transcript


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("extract", help="extract memories from a saved conversation transcript")
    p.add_argument("transcript", type=Path, help="a session transcript (.jsonl)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--rules", dest="mode", action="store_const", const="rules")
    mode.add_argument("--llm", dest="mode", action="store_const", const="llm")
    p.add_argument("--model", help="provider spec for --llm (default: MEMDIR_MODEL)")
    p.add_argument("--last", type=int, default=None, help="only the last N messages")
    p.set_defaults(handler=cmd_extract, mode="rules")


def _extractor(ctx: CliContext) -> Extractor:
    store = ctx.store()
    if ctx.args.mode == "rules":
        from memdir.extract.rule_extractor import RuleExtractor

        return RuleExtractor(store)
    spec = ctx.args.model or ctx.settings.model
    if not spec:
        raise ProviderConfigError("--llm needs a model: pass --model or set MEMDIR_MODEL")
    from memdir.extract.agent import AgentExtractor
    from memdir.llm.factory import provider_from_spec

    return AgentExtractor(provider_from_spec(spec, ctx.env), store, cwd=ctx.cwd)


def _payload(ctx: CliContext, result: ExtractionResult, elapsed: float) -> dict[str, Any]:
    root = ctx.memory_dir
    return {
        "mode": ctx.args.mode,
        "ok": result.ok,
        "error": result.error,
        "written": [p.relative_to(root).as_posix() for p in result.written],
        "removed": [p.relative_to(root).as_posix() for p in result.removed],
        "notice": result.notice,
        "elapsed_s": round(elapsed, 3),
        "run": result.run.summary() if result.run is not None else None,
    }


def cmd_extract(ctx: CliContext) -> int:
    path = (
        ctx.args.transcript if ctx.args.transcript.is_absolute() else ctx.cwd / ctx.args.transcript
    )
    read = read_transcript(path)
    for issue in read.issues:
        ctx.out.warn(f"{path}:{issue.line}: {issue.reason}")
    turns = turns_from_entries(read.entries, include_meta=ctx.args.mode != "rules")
    last = ctx.args.last
    count = len(turns) if last is None else max(0, min(last, len(turns)))
    extractor = _extractor(ctx)
    started = time.monotonic()
    result = asyncio.run(extractor.extract([t.message for t in turns], new_messages=count))
    payload = _payload(ctx, result, time.monotonic() - started)
    lines = [result.notice or "Nothing saved."]
    lines += [f"  + {rel}" for rel in payload["written"]]
    lines += [f"  - {rel}" for rel in payload["removed"]]
    if not result.ok:
        lines.append(f"extraction failed: {result.error}")
    ctx.out.data(payload, "\n".join(lines))
    return 0 if result.ok else 2
