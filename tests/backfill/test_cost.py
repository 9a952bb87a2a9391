"""The cost shown before a model backfill: tokens from the transcripts' sizes x list prices."""

from __future__ import annotations

import pytest

from memdir.backfill.cost import (
    CALLS,
    INSTRUCTION_TOKENS,
    MODEL_WINDOW_CHARS,
    OUTPUT_TOKENS,
    estimate,
    price,
)


@pytest.mark.parametrize(
    ("spec", "rates"),
    [
        ("claude-code:haiku", (1.0, 5.0)),
        ("claude-code:sonnet", (3.0, 15.0)),
        ("anthropic:claude-sonnet-4-5-20250929", (3.0, 15.0)),
        ("anthropic:claude-opus-4-1", (15.0, 75.0)),
        ("codex:gpt-5-mini", (0.25, 2.0)),
        ("codex:haiku", (1.25, 10.0)),  # Codex's default model, priced as gpt-5
        ("openai:gpt-4.1-mini", (0.40, 1.60)),
        ("llamacpp:smollm2", (0.0, 0.0)),
        ("scripted:replies.json", (0.0, 0.0)),
        ("anthropic:some-future-model", None),
        ("openai:qwen2.5@http://127.0.0.1:8080", None),
    ],
)
def test_price(spec: str, rates: tuple[float, float] | None) -> None:
    assert price(spec) == rates


def test_estimate_is_size_over_four_capped_at_the_window() -> None:
    small, huge = 40_000, 50 * 1024 * 1024
    est = estimate("claude-code:haiku", [small, huge])
    per_call = (small // 4 + INSTRUCTION_TOKENS) + (MODEL_WINDOW_CHARS // 4 + INSTRUCTION_TOKENS)
    assert est.input_tokens == CALLS * per_call
    assert est.output_tokens == 2 * CALLS * OUTPUT_TOKENS
    assert est.usd == pytest.approx((est.input_tokens * 1.0 + est.output_tokens * 5.0) / 1e6)
    assert "2 transcripts with claude-code:haiku" in est.line("claude-code:haiku")
    unknown = estimate("anthropic:some-future-model", [small])
    assert unknown.usd is None and "cost unknown" in unknown.line("x")
