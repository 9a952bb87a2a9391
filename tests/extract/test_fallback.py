"""The offline fallback runs only when the model could not be reached at all."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from memdir.errors import BudgetExhaustedError, HostModelUnavailableError, ProviderError
from memdir.extract.agent import AgentExtractor
from memdir.extract.fallback import FallbackExtractor
from memdir.extract.rule_extractor import RuleExtractor
from memdir.llm.base import Completion, Message
from memdir.llm.scripted import ScriptedProvider
from memdir.store import MemoryStore

SAID = [Message("user", "remember that I prefer tabs over spaces")]


def both(tmp_path: Path, *steps: object) -> FallbackExtractor:
    store = MemoryStore(tmp_path / "memory")
    return FallbackExtractor(AgentExtractor(ScriptedProvider(steps), store), RuleExtractor(store))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "failure", [HostModelUnavailableError("claude is not installed"), BudgetExhaustedError("spent")]
)
def test_unavailable_model_falls_back_to_the_rules(tmp_path: Path, failure: Exception) -> None:
    extractor = both(tmp_path, failure)
    result = asyncio.run(extractor.extract(SAID, new_messages=1))
    assert result.ok and len(result.written) == 1
    assert result.fallback is not None and str(failure) in result.fallback


def test_a_model_that_saved_nothing_is_not_second_guessed(tmp_path: Path) -> None:
    result = asyncio.run(
        both(tmp_path, Completion.from_text("nothing")).extract(SAID, new_messages=1)
    )
    assert result.ok and result.written == [] and result.fallback is None


def test_other_provider_errors_do_not_fall_back(tmp_path: Path) -> None:
    result = asyncio.run(both(tmp_path, ProviderError("bad output")).extract(SAID, new_messages=1))
    assert not result.ok and result.fallback is None and result.written == []
