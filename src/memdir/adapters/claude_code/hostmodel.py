"""Which model the hooks' background paths use: zero-config, the user's own Claude Code.

Inside the host, with no ``MEMDIR_MODEL``, the model-backed background paths (extraction after a
turn, in the detached worker) run on ``claude-code:<hostModel>`` — the user's ``claude`` CLI and
login, a small model by default — within the daily budget ``hostModelBudgetUsd``. Per-prompt
recall stays local (latency) unless ``MEMDIR_RECALL=llm``. ``hostModel: off`` (or a zero budget,
or ``memdir install claude-code --llm off``) switches it off; ``MEMDIR_MODEL`` always wins.

Invariants: a child CLI started by memdir carries ``MEMDIR_CHILD=1`` and every memdir hook
returns at once, silently, when it sees it (:func:`is_child`), so a child can never recurse into
memdir's hooks even if its settings were loaded; nothing here runs a process or touches the
network — the provider does, in the background worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.llm.claude_code_io import CHILD_ENV_FLAG

if TYPE_CHECKING:
    from memdir.config import Settings
    from memdir.llm.base import Provider
    from memdir.llm.ledger import CostLedger

HOST_SPEC_PREFIX = "claude-code:"


def is_child(env: Mapping[str, str]) -> bool:
    """True inside a CLI that memdir itself started (its hooks must do nothing)."""
    return env.get(CHILD_ENV_FLAG, "").strip() == "1"


def host_model_on(settings: Settings) -> bool:
    return settings.host_model != "off" and settings.host_model_budget_usd > 0


def background_spec(settings: Settings) -> str | None:
    """The model spec for background paths: ``MEMDIR_MODEL``, else the host model, else None."""
    if settings.model:
        return settings.model
    if host_model_on(settings):
        return HOST_SPEC_PREFIX + settings.host_model
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
) -> Provider | None:
    """The provider for a background path, with cost records and the budget; None when off."""
    spec = background_spec(settings)
    if spec is None:
        return None
    if spec.startswith(HOST_SPEC_PREFIX):
        from memdir.llm.claude_code import ClaudeCodeProvider

        return ClaudeCodeProvider(
            spec.removeprefix(HOST_SPEC_PREFIX),
            env=env,
            ledger=host_ledger(settings),
            cwd=cwd,
            purpose=purpose,
            session=session,
        )
    from memdir.llm.factory import provider_from_spec

    return provider_from_spec(spec, env)


__all__ = [
    "HOST_SPEC_PREFIX",
    "background_provider",
    "background_spec",
    "host_ledger",
    "host_model_on",
    "is_child",
]
