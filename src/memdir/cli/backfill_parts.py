"""What ``memdir backfill`` is built from, decided from the settings: the hosts' transcript
sources, the model (or none), the extractor for a session's time, the hooks' own cursors.

The composition root of :mod:`memdir.backfill` (which imports none of this): the command module
only sequences what these return.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memdir.backfill import Item
from memdir.backfill.run import ExtractorFor
from memdir.cli.context import CliContext
from memdir.extract.base import Extractor

if TYPE_CHECKING:
    from memdir.llm.base import Provider

# every host whose dialect lists a project's past sessions (``project_transcripts``)
HOSTS = ("claude-code", "codex", "gemini", "qwen", "copilot", "pi", "cline")


def sources(ctx: CliContext) -> list[Any]:
    from memdir.adapters.hosts import dialect
    from memdir.adapters.hosts.sessions import DialectSource

    hosts = HOSTS if ctx.args.host == "all" else (ctx.args.host,)
    root = ctx.paths.project_root
    return [DialectSource(dialect(h), ctx.env, root) for h in hosts]


def model_spec(ctx: CliContext, sources: list[Any]) -> tuple[str | None, str]:
    """The model spec for this run (None: offline) and, when offline, why."""
    if ctx.args.offline:
        return None, "--offline"
    if ctx.args.model:
        return ctx.args.model, ""
    from memdir.adapters.hooks.hostmodel import background_spec, host_cli_present

    for source in sources:
        spec = background_spec(ctx.settings, source.dialect.model_provider)
        if spec is not None and host_cli_present(spec, ctx.env):
            return spec, ""
    return None, "no model: MEMDIR_MODEL is not set and no host CLI runs as memdir's model here"


def extractor_for(ctx: CliContext, spec: str | None) -> ExtractorFor:
    """Extractors for sessions of a given time, all over one store and one provider (made at
    the first session, so a run the budget stops at once starts nothing)."""
    from memdir.extract.rule_extractor import RuleExtractor

    store = ctx.store()
    if spec is None:  # one extractor, set to each session's time: it keeps what it has read
        now = [dt.datetime.now().astimezone()]
        offline = RuleExtractor(store, clock=lambda: now[0])

        def at(when: dt.datetime) -> Extractor:
            now[0] = when
            return offline

        return at
    from memdir.extract.agent import AgentExtractor
    from memdir.extract.fallback import FallbackExtractor
    from memdir.extract.session_pass import WithSessionLessons

    made: list[Provider] = []

    def make(when: dt.datetime) -> Extractor:
        if not made:
            made.append(provider(ctx, spec))
        clock = lambda: when  # noqa: E731
        agent = AgentExtractor(made[0], store, cwd=ctx.paths.cwd, time_limit=300.0, clock=clock)
        rules = RuleExtractor(store, clock=clock)
        return WithSessionLessons(FallbackExtractor(agent, rules), store, clock=clock)

    return make


def provider(ctx: CliContext, spec: str) -> Provider:
    from memdir.adapters.hooks.hostmodel import host_cli_module, host_ledger
    from memdir.llm.factory import provider_from_spec

    host = host_cli_module(spec)
    if host is None:
        return provider_from_spec(spec, ctx.env)
    made: Provider = host.HostCliProvider(
        spec.split(":", 1)[1],
        env=ctx.env,
        ledger=host_ledger(ctx.settings),
        cwd=ctx.paths.cwd,
        purpose="backfill",
        session=None,
    )
    return made


def hook_cursor(ctx: CliContext) -> Callable[[Item], str | None]:
    """Where memdir's own hooks left each session's extraction (their per-session state)."""
    from memdir.adapters.hooks.state import SessionStore
    from memdir.adapters.hosts.sessions import session_id_of

    states = SessionStore(ctx.paths.cache_dir)

    def covered(item: Item) -> str | None:
        sid = session_id_of(item.host, item.path)
        if sid is None or not states.path(sid).is_file():
            return None
        return states.load(sid).cursor

    return covered


def left_today(ctx: CliContext, spec: str | None) -> float | None:
    if spec is None:
        return None
    from memdir.adapters.hooks.hostmodel import host_cli_module, host_ledger

    return host_ledger(ctx.settings).remaining() if host_cli_module(spec) is not None else None


__all__ = ["HOSTS", "extractor_for", "hook_cursor", "left_today", "model_spec", "sources"]
