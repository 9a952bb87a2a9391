"""What every headless agent CLI call shares (pure; no processes): the child's invocation, how
the child starts memdir's tool relay, and the list-price arithmetic for the CLIs that report
tokens but never dollars (``codex exec``, ``gemini -p``).

Each CLI's own module (``claude_code_io``, ``codex_cli_io``, ``gemini_cli_io``) builds these
for its flags and keeps its own price table; nothing here knows a CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from memdir.llm.base import Usage

Price = tuple[float, float, float]  # USD per million tokens: input, cached input, output


@dataclass(frozen=True, slots=True)
class ChildCall:
    """One CLI invocation: argv after the executable, and the prompt for stdin."""

    args: list[str]
    prompt: str


@dataclass(frozen=True, slots=True)
class RelayServer:
    """How the child starts memdir's relay: ``python -m memdir.llm.relay_mcp <socket>``."""

    python: str
    socket: str
    pythonpath: str  # passed explicitly: the CLIs give an MCP server little or none of theirs


def price_of(prices: Mapping[str, Price], model: str, fallback: Price) -> Price:
    """The longest key of ``prices`` that ``model`` starts with, else ``fallback``."""
    name = model.strip().lower()
    matches = [key for key in prices if name.startswith(key)]
    return prices[max(matches, key=len)] if matches else fallback


def dollars(usage: Usage, price: Price) -> float:
    """``usage`` at ``price`` (an estimate: the CLI reports no cost)."""
    fresh, cached, out = price
    spent = usage.input_tokens * fresh + usage.cache_read_tokens * cached
    return (spent + usage.output_tokens * out) / 1_000_000


__all__ = ["ChildCall", "Price", "RelayServer", "dollars", "price_of"]
