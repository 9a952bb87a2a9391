"""The dream with a model, in a detached worker: ``SessionEnd`` never waits for a model.

When a model is available for background work (``MEMDIR_MODEL`` or the user's own Claude Code
CLI), ``session-end`` spawns this worker instead of dreaming offline in the hook. The worker goes
through the same gates and lock as every dream (:func:`~memdir.consolidate.run.maybe_dream`), so
a closed gate costs one cheap check and no model call. A model dream that fails — the host CLI
missing, logged out, slow, the day's budget spent, or a run that went wrong — is rolled back by
``maybe_dream`` and the offline dreamer runs in its place, so an open gate is never left to a
model that cannot come. One ``dream`` row in the hook log says what ran and what it cost.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks import hooklog

if TYPE_CHECKING:
    from memdir.adapters.hooks.handlers import HookContext


def run_dream_worker(hc: HookContext, session_id: str) -> dict[str, Any]:
    """The worker's body: gates → model dream → offline dream if the model one failed."""
    from memdir.adapters.hooks.hostmodel import background_provider
    from memdir.consolidate.factory import default_dreamer, dream_gate
    from memdir.consolidate.run import maybe_dream_sync
    from memdir.team.guard import guarded_store

    started = time.monotonic()
    row: dict[str, Any] = {"session": session_id, "event": "dream"}
    memory_dir = hc.paths.memory_dir
    store = guarded_store(
        memory_dir,
        private_secrets=hc.settings.private_secrets,
        header_cache=hc.cache_dir / "headers.json",
    )
    gate = dream_gate(hc.settings, hc.paths)
    provider = background_provider(
        hc.settings,
        hc.env,
        cwd=hc.paths.cwd,
        purpose="dream",
        session=session_id,
        provider=hc.dialect.model_provider,
    )
    dreamer = default_dreamer(store, hc.paths, provider=provider)
    outcome = maybe_dream_sync(gate, dreamer, current_session=session_id)
    row["reason"] = outcome.reason
    if outcome.gate is not None and not outcome.gate.open:
        row["reason"] = f"gate closed ({outcome.gate.reason})"
    if provider is not None and outcome.reason == "failed":
        error = outcome.report.error if outcome.report is not None else None
        row["fallback"] = f"offline (model dream failed: {error})"
        # the gate was open a moment ago; force skips re-checking it (its scan throttle), never
        # the lock
        outcome = maybe_dream_sync(
            gate, default_dreamer(store, hc.paths), current_session=session_id, force=True
        )
        row["reason"] = outcome.reason
    row["ran"] = outcome.ran
    row["notice"] = outcome.notice or None
    row.update(getattr(provider, "totals", dict)())
    row["ms"] = round((time.monotonic() - started) * 1000, 1)
    hooklog.record(hc.cache_dir, row)
    return row


__all__ = ["run_dream_worker"]
