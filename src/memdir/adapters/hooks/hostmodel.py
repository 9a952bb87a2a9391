"""Which model the hooks' background paths use: zero-config, the user's own Claude Code.

Inside the host, with no ``MEMDIR_MODEL``, the model-backed background paths (extraction after a
turn, in the detached worker) run on ``claude-code:<hostModel>`` — the user's ``claude`` CLI and
login, a small model by default — within the daily budget ``hostModelBudgetUsd``. Per-prompt
recall stays local (latency) unless ``MEMDIR_RECALL=llm``. ``hostModel: off`` (or a zero budget,
or ``memdir install claude-code --llm off``) switches it off; ``MEMDIR_MODEL`` always wins.

Invariants: importing this module loads no provider code (the per-prompt hook imports it); a
child CLI started by memdir carries ``MEMDIR_CHILD=1`` and every memdir hook
returns at once, silently, when it sees it (:func:`is_child`), so a child can never recurse into
memdir's hooks even if its settings were loaded; nothing here runs a process or touches the
network — the provider does, in the background worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.config import CHILD_ENV_FLAG

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect
    from memdir.config import Settings
    from memdir.llm.base import Provider
    from memdir.llm.ledger import CostLedger

HOST_SPEC_PREFIX = "claude-code:"
# A host CLI run headless as memdir's background model: spec prefix -> module holding
# ``HostCliProvider`` (a class taking ``(model, *, env, ledger, cwd, purpose, session)``) and
# ``find_cli(env) -> str | None`` (and, optionally, ``model_words(host_model) -> str``, what the
# model is in plain words). A host's dialect names its prefix (``model_provider``).
HOST_PROVIDERS = {
    "claude-code": "memdir.llm.claude_code",
    "codex": "memdir.llm.codex_cli",
    "gemini": "memdir.llm.gemini_cli",
    "pi": "memdir.llm.pi_cli",
    "copilot": "memdir.llm.copilot_cli",
    "qwen": "memdir.llm.qwen_cli",
    "cline": "memdir.llm.cline_cli",
}


def is_child(env: Mapping[str, str]) -> bool:
    """True inside a CLI that memdir itself started (its hooks must do nothing)."""
    return env.get(CHILD_ENV_FLAG, "").strip() == "1"


def host_model_on(settings: Settings) -> bool:
    return settings.host_model != "off" and settings.host_model_budget_usd > 0


def background_spec(settings: Settings, provider: str | None = "claude-code") -> str | None:
    """The model spec for background paths: ``MEMDIR_MODEL``, else the host model through the
    host's own CLI (``provider``: the dialect's ``model_provider``; None: the host has none
    memdir runs), else None."""
    if settings.model:
        return settings.model
    if provider is not None and host_model_on(settings):
        return f"{provider}:{settings.host_model}"
    return None


def host_ledger(settings: Settings) -> CostLedger:
    from memdir.llm.ledger import CostLedger, ledger_path

    return CostLedger(ledger_path(settings.memdir_home), budget_usd=settings.host_model_budget_usd)


def background_provider(
    settings: Settings,
    env: Mapping[str, str],
    *,
    cwd: Path,
    purpose: str,
    session: str | None = None,
    provider: str | None = "claude-code",
) -> Provider | None:
    """The provider for a background path, with cost records and the budget; None when off."""
    spec = background_spec(settings, provider)
    if spec is None:
        return None
    host = host_cli_module(spec)
    if host is not None:
        model = spec.split(":", 1)[1]
        made: Provider = host.HostCliProvider(
            model, env=env, ledger=host_ledger(settings), cwd=cwd, purpose=purpose, session=session
        )
        return made
    from memdir.llm.factory import provider_from_spec

    return provider_from_spec(spec, env)


def host_cli_module(spec: str) -> Any:
    """The module of the host CLI provider ``spec`` names, or None for any other spec."""
    import importlib

    module = HOST_PROVIDERS.get(spec.split(":", 1)[0])
    return importlib.import_module(module) if module is not None else None


def host_cli_present(spec: str, env: Mapping[str, str]) -> bool:
    """False when ``spec`` names a host CLI that is not installed here (no worker to start)."""
    host = host_cli_module(spec)
    return host is None or host.find_cli(env) is not None


def describe(
    settings: Settings, env: Mapping[str, str], llm: str, dialect: Dialect | None = None
) -> list[str]:
    """What ``memdir install <host> --llm <llm>`` sets up, in plain words, with its cost."""
    from memdir.llm.claude_code import find_cli

    if dialect is not None and dialect.model_provider != "claude-code":
        return _describe_other(settings, env, llm, dialect)

    recall = "Recall" if getattr(dialect, "recall_at_start", False) else "Per-prompt recall"
    offline = (
        f"{recall} is always local (no model, no cost). Without a model, memories are "
        'saved only from explicit statements ("remember that ...") and session notes and '
        "dream run offline."
    )
    if llm == "off":
        return ["Model: off — memdir never calls a model from the hooks.", offline]
    if llm == "key" or settings.model:
        spec = settings.model or "(MEMDIR_MODEL is not set)"
        return [
            f"Model: {spec}, with your own API key — memdir never uses your Claude Code login.",
            "Set MEMDIR_MODEL (e.g. anthropic:claude-haiku-4-5) and ANTHROPIC_API_KEY in the "
            "environment Claude Code runs in; that provider bills each call to the key.",
            offline,
        ]
    if not host_model_on(settings):
        return [
            "Model: off (hostModel is off or hostModelBudgetUsd is 0 in your settings).",
            offline,
        ]
    spec = HOST_SPEC_PREFIX + settings.host_model
    lines = [
        f"Model: {spec} — your own Claude Code CLI and login (subscription or API key), "
        "started in the background: after a turn to extract memories (at most once per "
        "turn, skipped when the agent saved memory itself), before a compaction to update the "
        "session notes, at session end to dream when its gates open (autoDreamEnabled). No "
        "built-in tools, no hooks, no session saved; it can only write inside the memory dir.",
        f"Cost: counted against your Claude Code usage; memdir stops at "
        f"${settings.host_model_budget_usd:.2f} a day (hostModelBudgetUsd) and falls back "
        "offline. `memdir status` and `memdir hook log` show the spend; turn it off with "
        "`--llm off` or hostModel: off.",
        "Per-prompt recall stays local (no model, no cost).",
    ]
    if find_cli(env) is None:
        lines.append("Note: `claude` is not on PATH here — until it is, memdir works offline.")
    return lines


def _describe_other(
    settings: Settings, env: Mapping[str, str], llm: str, dialect: Dialect
) -> list[str]:
    recall = "Recall" if getattr(dialect, "recall_at_start", False) else "Per-prompt recall"
    offline = (
        f"{recall} is always local (no model, no cost). Without a model, memories are "
        'saved from explicit statements ("remember that ...") and what a whole session shows, '
        "and session notes and dream run offline."
    )
    if llm == "off" or (not settings.model and dialect.model_provider is None and llm != "key"):
        why = (
            "off — memdir never calls a model from the hooks."
            if llm == "off"
            else f"offline — memdir does not run {dialect.title} headless as its model "
            "(set MEMDIR_MODEL to use your own API key)."
        )
        return [f"Model: {why}", offline]
    if llm == "key" or settings.model:
        spec = settings.model or "(MEMDIR_MODEL is not set)"
        return [
            f"Model: {spec}, with your own API key — memdir never uses your {dialect.title} login.",
            offline,
        ]
    spec = f"{dialect.model_provider}:{settings.host_model}"
    host = host_cli_module(spec)
    # a provider may say which model a hostModel value means for it (gemini: a Gemini tier)
    words = getattr(host, "model_words", None)
    claude_alias = settings.host_model in ("haiku", "sonnet", "opus", "default")
    if callable(words):
        model = str(words(settings.host_model))
    else:
        model = f"your {dialect.title} default model" if claude_alias else settings.host_model
    lines = [
        f"Model: {spec} ({model}) — your own "
        f"{dialect.title} ({dialect.headless}) and login, started in the background after a "
        "turn to extract memories, before a compaction to update the session notes and at "
        "session end to dream; none of its own tools runs, no hooks, no session saved, writes only "
        "inside the memory dir through memdir's tools.",
        f"Cost: what {dialect.title} reports, else an estimate from its tokens; memdir stops at "
        f"${settings.host_model_budget_usd:.2f} a day (hostModelBudgetUsd) and falls back "
        "offline. `memdir status` shows the spend; `--llm off` turns it off.",
        "Per-prompt recall stays local (no model, no cost).",
    ]
    note = getattr(dialect, "model_note", None)  # what the host keeps from its hooks
    if note:
        lines.append(note)
    if host is not None and host.find_cli(env) is None:
        lines.append(
            f"Note: `{dialect.headless}` is not available here (the CLI is not on PATH) — until "
            "it is, memdir works offline."
        )
    return lines


__all__ = [
    "HOST_SPEC_PREFIX",
    "background_provider",
    "background_spec",
    "describe",
    "host_ledger",
    "host_model_on",
    "is_child",
]
