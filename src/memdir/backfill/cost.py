"""What a model backfill is likely to cost, said before it starts.

An estimate, on purpose simple enough to state in one line: the extraction agent reads the
session (at most :data:`MODEL_WINDOW_CHARS` of its newest messages) with the instruction and the
memory manifest after it, in about :data:`CALLS` model calls (one to read, one to write: the
prompt asks for two turns), each answering about :data:`OUTPUT_TOKENS` tokens. The session's
size is its transcript file's, at four bytes a token — an upper bound, since the JSON around each
message counts too. Prices are list prices per million tokens; a model memdir does not know is
priced at None (tokens are still shown) and a local one costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memdir.llm.codex_cli_io import price_of as codex_price_of

MODEL_WINDOW_CHARS = 400_000  # the newest ~100k tokens of a session reach the model
BYTES_PER_TOKEN = 4
INSTRUCTION_TOKENS = 3_000  # the extraction prompt with a manifest of a few dozen memories
CALLS = 2
OUTPUT_TOKENS = 1_000

# USD per million tokens (input, output), Anthropic's list prices; Claude Code's aliases first
ANTHROPIC = {
    "haiku": (1.0, 5.0),
    "sonnet": (3.0, 15.0),
    "opus": (5.0, 25.0),
    "default": (3.0, 15.0),
    "claude-haiku-4": (1.0, 5.0),
    "claude-3-5-haiku": (0.80, 4.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4-0": (15.0, 75.0),
}
_LOCAL = ("llamacpp", "scripted")


@dataclass(frozen=True, slots=True)
class Estimate:
    transcripts: int
    input_tokens: int
    output_tokens: int
    usd: float | None  # None: a model whose price memdir does not know

    def line(self, spec: str) -> str:
        tin, tout = _tokens(self.input_tokens), _tokens(self.output_tokens)
        tokens = f"~{tin} input + ~{tout} output tokens"
        cost = f"~${self.usd:.2f}" if self.usd is not None else "cost unknown for this model"
        return f"{self.transcripts} transcripts with {spec}: {tokens}, {cost} (an upper estimate)"


def price(spec: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens of the model ``spec`` names; None if unknown."""
    kind, _, model = spec.partition(":")
    name = model.strip().lower()
    if kind in _LOCAL:
        return (0.0, 0.0)
    if kind == "codex" or (kind == "openai" and name.startswith(("gpt", "o3", "o4"))):
        fresh, _cached, out = codex_price_of(name)
        return (fresh, out)
    if kind in ("claude-code", "anthropic"):
        matches = [key for key in ANTHROPIC if name.startswith(key)]
        return ANTHROPIC[max(matches, key=len)] if matches else None
    return None


def session_tokens(size: int) -> int:
    """Input tokens of one extraction run over a transcript of ``size`` bytes."""
    return min(size, MODEL_WINDOW_CHARS) // BYTES_PER_TOKEN + INSTRUCTION_TOKENS


def estimate(spec: str, sizes: Iterable[int]) -> Estimate:
    listed = list(sizes)
    tin = sum(session_tokens(s) for s in listed) * CALLS
    tout = len(listed) * CALLS * OUTPUT_TOKENS
    rates = price(spec)
    usd = None if rates is None else (tin * rates[0] + tout * rates[1]) / 1_000_000
    return Estimate(len(listed), tin, tout, usd)


def _tokens(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1_000_000 else f"{n / 1e3:.0f}k" if n >= 1_000 else str(n)


__all__ = ["MODEL_WINDOW_CHARS", "Estimate", "estimate", "price", "session_tokens"]
