"""What a ``gemini -p`` run costs memdir: the Gemini model for memdir's ``hostModel`` value, its
list price, and the usage Gemini CLI reports per model (``stats.models`` of the final
``result`` event) as memdir's :class:`~memdir.llm.base.Usage`.

Gemini CLI reports tokens, never dollars: the cost booked in memdir's ledger is an estimate at
:data:`PRICES`. Invariant: an unknown model is priced as the dearest common tier (2.5 Pro), so
the daily budget errs on the side of stopping early.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memdir.llm import cli_call
from memdir.llm.base import Usage

# memdir's hostModel names Claude models; for Gemini they pick the matching Gemini tier.
DEFAULT_MODEL = "gemini-2.5-flash"
LARGE_MODEL = "gemini-2.5-pro"
SMALL_ALIASES = frozenset({"", "default", "haiku"})
LARGE_ALIASES = frozenset({"sonnet", "opus"})

# USD per million tokens: (input, cached input, output), Google's list prices (2025, prompts
# under 200k tokens). Longest matching prefix wins; an unknown model is priced as 2.5 Pro.
PRICES: dict[str, tuple[float, float, float]] = {
    "gemini-2.5-pro": (1.25, 0.125, 10.0),
    "gemini-2.5-flash": (0.30, 0.03, 2.50),
    "gemini-2.5-flash-lite": (0.10, 0.01, 0.40),
    "gemini-2.0-flash": (0.10, 0.025, 0.40),
    "gemini-2.0-flash-lite": (0.075, 0.019, 0.30),
    "gemini-3-pro": (2.0, 0.20, 12.0),
    "gemini-3.1-pro": (2.0, 0.20, 12.0),
    "gemini-3-flash": (0.50, 0.05, 3.0),
}
FALLBACK_PRICE = PRICES["gemini-2.5-pro"]


def model_name(model: str) -> str:
    """The Gemini model for memdir's ``hostModel`` value (Claude aliases map to a tier)."""
    name = model.strip().lower()
    if name in SMALL_ALIASES or name.startswith("claude-haiku"):
        return DEFAULT_MODEL
    if name in LARGE_ALIASES or name.startswith("claude"):
        return LARGE_MODEL
    return model.strip()


def price_of(model: str) -> tuple[float, float, float]:
    return cli_call.price_of(PRICES, model, FALLBACK_PRICE)


def estimate_cost(by_model: Mapping[str, Usage]) -> float:
    """Dollars for each model's usage at :data:`PRICES` (an estimate: Gemini reports no cost)."""
    return sum(cli_call.dollars(usage, price_of(model)) for model, usage in by_model.items())


def _count(raw: Mapping[str, Any], key: str) -> int:
    value = raw.get(key)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def model_usage(raw: Any) -> Usage:
    """One model's ``stats.models[m]`` as memdir's usage: input without the cached part (as
    Anthropic's), output with the thinking tokens (billed as output)."""
    if not isinstance(raw, dict):
        return Usage()
    prompt, cached = _count(raw, "input_tokens"), _count(raw, "cached")
    fresh = _count(raw, "input") if "input" in raw else max(prompt - cached, 0)
    candidates = _count(raw, "output_tokens")
    output = max(candidates, _count(raw, "total_tokens") - prompt)
    return Usage(input_tokens=fresh, output_tokens=output, cache_read_tokens=cached)


def usage_by_model(stats: Any) -> dict[str, Usage]:
    models = stats.get("models") if isinstance(stats, dict) else None
    if not isinstance(models, dict):
        return {}
    return {str(name): model_usage(raw) for name, raw in models.items()}


__all__ = [
    "DEFAULT_MODEL",
    "LARGE_MODEL",
    "PRICES",
    "estimate_cost",
    "model_name",
    "model_usage",
    "price_of",
    "usage_by_model",
]
