"""Memories: the list, one memory (rendered, raw, validity, supersession chain), and the writes
(edit, create, rename, retire, delete) — each one store call, as ``memdir edit/add/mv/retire/rm``.

Every write goes through the store the CLI uses (lock, guards, MEMORY.md upkeep); an edit
carries the hash of the file as shown, so a change made on disk meanwhile is refused, never
overwritten. Credential warnings from the write guards are shown to the user.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memdir import frontmatter
from memdir.consolidate.forget import retire
from memdir.errors import ConfigError, MemdirError
from memdir.model import MEMORY_TYPES, MemoryHeader
from memdir.team.guard import collect_credential_notes
from memdir.ui.listing import SORTS, STATUSES, Filters, Rows, chain, listing, row_of
from memdir.ui.render import Pages, url_path
from memdir.ui.security import checked_form


def routes(pages: Pages, read_only: bool) -> list[Route]:
    ctx = pages.ctx
    rows = Rows()

    async def index(request: Request) -> Response:
        chosen = Filters.from_query(request.query_params)
        headers = await run_in_threadpool(ctx.headers)
        found = await run_in_threadpool(
            lambda: listing(headers, today=ctx.today(), filters=chosen, rows=rows)
        )
        return pages.render(
            request,
            "memories.html",
            listing=found,
            f=chosen,
            types=MEMORY_TYPES,
            sorts=SORTS,
            statuses=STATUSES,
        )

    async def show(request: Request) -> Response:
        rel = request.path_params["path"]
        try:
            headers = await run_in_threadpool(ctx.headers)
            shown = await run_in_threadpool(_load, ctx.store(), rel, ctx.today(), headers)
            shown["evidence"] = await run_in_threadpool(_evidence, ctx, shown["rel"])
        except MemdirError as exc:
            return pages.render(request, "missing.html", code=404, rel=rel, error=str(exc))
        return pages.render(request, "memory.html", types=MEMORY_TYPES, **shown)

    async def new(request: Request) -> Response:
        return pages.render(request, "new.html", types=MEMORY_TYPES)

    def writer(action: Callable[[str, FormData], str], done: str) -> Callable[[Request], Any]:
        """A POST route: check the form, run the store call, report back on the next page."""

        async def endpoint(request: Request) -> Response:
            rel = request.path_params.get("path", "")
            form = await checked_form(request, ctx.csrf)
            try:
                with collect_credential_notes() as notes:
                    target = await run_in_threadpool(action, rel, form)
            except MemdirError as exc:
                back = f"/memory/{url_path(rel)}" if rel else "/new"
                return pages.redirect(back, ("error", str(exc)))
            messages = [("ok", done.format(rel=rel, target=target))]
            messages += [("warning", n) for n in dict.fromkeys(notes)]
            where = "/memories" if target == "" else f"/memory/{url_path(target)}"
            return pages.redirect(where, *messages)

        return endpoint

    def save(rel: str, form: FormData) -> str:
        store = ctx.store()
        memory = frontmatter.parse_memory(store.read_text(rel), store.rel(rel))
        memory.name = _field(form, "name")
        memory.description = " ".join(_field(form, "description").split())
        memory.type = _type(form)
        memory.body = _body(form)
        store.save(memory, expected_hash=str(form.get("hash", "")) or None)
        return memory.path

    def create(rel: str, form: FormData) -> str:
        memory = ctx.store().create(
            _field(form, "name"), _field(form, "description"), _type(form), _body(form)
        )
        return memory.path

    def rename(rel: str, form: FormData) -> str:
        return ctx.store().rename(rel, _field(form, "new_path"))

    def retire_one(rel: str, form: FormData) -> str:
        by = str(form.get("superseded_by", "")).strip() or None
        return retire(ctx.store(), rel, reason=str(form.get("reason", "")), superseded_by=by)

    def delete(rel: str, form: FormData) -> str:
        if str(form.get("confirm", "")) != rel:
            raise ConfigError(f"type the file name {rel} to confirm the delete")
        ctx.store().delete(rel, expected_hash=str(form.get("hash", "")) or None)
        return ""

    out = [
        Route("/memories", index, name="memories"),
        Route("/memory/{path:path}", show, name="memory"),
    ]
    if not read_only:
        out[1:1] = [
            Route("/new", new, name="new"),
            Route("/new", writer(create, "created {target}"), methods=["POST"]),
            Route("/save/{path:path}", writer(save, "saved {target}"), methods=["POST"]),
            Route("/rename/{path:path}", writer(rename, "renamed to {target}"), methods=["POST"]),
            Route("/retire/{path:path}", writer(retire_one, "retired {rel}"), methods=["POST"]),
            Route("/delete/{path:path}", writer(delete, "deleted {rel}"), methods=["POST"]),
        ]
    return out


def _field(form: FormData, key: str) -> str:
    value = str(form.get(key, "")).strip()
    if not value:
        raise ConfigError(f"{key.replace('_', ' ')} must not be empty")
    return value


def _type(form: FormData) -> str:
    value = str(form.get("type", ""))
    if value not in MEMORY_TYPES:
        raise ConfigError(f"type must be one of {', '.join(MEMORY_TYPES)}")
    return value


def _body(form: FormData) -> str:
    body = str(form.get("body", "")).replace("\r\n", "\n")  # browsers post CRLF
    return body if body.endswith("\n") or not body else body + "\n"


def _evidence(ctx: Any, rel: str) -> Any:
    """The memory's verdicts against the project's repository (memdir.evidence), or None."""
    from memdir.evidence import screen

    if not ctx.evidence:
        return None
    [checked] = screen([ctx.memory_dir / rel], ctx.paths.project_root, ctx.cache_dir, budget=2.0)
    return checked.evidence


def _load(store: Any, rel: str, today: Any, headers: list[MemoryHeader]) -> dict[str, Any]:
    """Everything the memory page shows, read once."""
    text = store.read_text(rel)
    rel = store.rel(rel)
    memory = frontmatter.parse_memory(text, rel)
    by_name = {h.filename: h for h in headers}
    replaced_by = {h.filename: v for h in headers if (v := dict(h.validity).get("superseded_by"))}
    header = by_name.get(rel)
    return {
        "rel": rel,
        "memory": memory,
        "raw": text,
        "hash": store.file_hash(rel),
        "row": row_of(header, today) if header else None,
        "header": header,
        "validity": {k: v for k, v in memory.extra.items() if k in _VALIDITY_KEYS},
        "chain": chain(rel, replaced_by),
        "replaces": sorted(k for k, v in replaced_by.items() if v == rel),
        "exists": set(by_name),
    }


_VALIDITY_KEYS = ("expires", "superseded_by", "retired", "retired_reason")
