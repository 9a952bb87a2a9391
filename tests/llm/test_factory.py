from __future__ import annotations

from pathlib import Path

import pytest

from memdir.errors import ProviderConfigError
from memdir.llm.anthropic_provider import AnthropicProvider
from memdir.llm.factory import provider_from_spec
from memdir.llm.llamacpp import LlamaCppProvider, find_smollm2_gguf
from memdir.llm.openai_compat import OpenAICompatProvider
from memdir.llm.retry import RetryingProvider


@pytest.mark.usefixtures("allow_real_providers")
@pytest.mark.parametrize(
    ("spec", "env", "base_url", "key_in_header", "max_tokens_param"),
    [
        ("openai:gpt-test", {"OPENAI_API_KEY": "k1"}, "https://api.openai.com/v1/", "k1",
         "max_completion_tokens"),
        ("openai:llama3.2:3b@http://127.0.0.1:11434/v1", {}, "http://127.0.0.1:11434/v1/",
         "not-needed", "max_tokens"),
        ("openai:qwen", {"MEMDIR_OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
                         "OPENAI_BASE_URL": "http://other/v1", "MEMDIR_OPENAI_API_KEY": "k2",
                         "OPENAI_API_KEY": "k3"}, "http://127.0.0.1:8000/v1/", "k2", "max_tokens"),
        ("openai:qwen", {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "http://127.0.0.1:9/v1/",
         "not-needed", "max_tokens"),
    ],
)  # fmt: skip
def test_openai_specs(
    spec: str,
    env: dict[str, str],
    base_url: str,
    key_in_header: str,
    max_tokens_param: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://leaked.invalid/v1")
    provider = provider_from_spec(spec, env)
    assert isinstance(provider, RetryingProvider)
    inner = provider.inner
    assert isinstance(inner, OpenAICompatProvider)
    assert str(inner._client.base_url) == base_url
    assert inner._client.api_key == key_in_header
    assert inner.max_tokens_param == max_tokens_param
    assert inner.model == spec.split(":", 1)[1].split("@", 1)[0]


@pytest.mark.usefixtures("allow_real_providers")
@pytest.mark.parametrize(
    ("env", "key"),
    [
        ({"ANTHROPIC_API_KEY": "a1"}, "a1"),
        ({"ANTHROPIC_API_KEY": "a1", "MEMDIR_ANTHROPIC_API_KEY": "a2"}, "a2"),
    ],
)
def test_anthropic_spec(env: dict[str, str], key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The process environment must not leak in: only the injected mapping counts.
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://leaked.invalid")
    provider = provider_from_spec("anthropic:claude-test", env)
    assert isinstance(provider, RetryingProvider)
    assert isinstance(provider.inner, AnthropicProvider)
    assert provider.inner.model == "claude-test"
    assert provider.inner._client.api_key == key
    assert str(provider.inner._client.base_url).rstrip("/") == "https://api.anthropic.com"


@pytest.mark.usefixtures("allow_real_providers")
def test_anthropic_without_key_is_a_config_error() -> None:
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY"):
        provider_from_spec("anthropic:claude-test", {"OPENAI_API_KEY": "wrong one"})


@pytest.mark.parametrize(
    "spec", ["", "anthropic", "anthropic:", "bard:pro", "openai:@http://x", "claude-test"]
)
def test_invalid_specs(spec: str) -> None:
    with pytest.raises(ProviderConfigError):
        provider_from_spec(spec, {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})


@pytest.mark.parametrize("spec", ["anthropic:claude-test", "openai:gpt-test"])
def test_network_providers_are_refused_in_tests(spec: str) -> None:
    with pytest.raises(ProviderConfigError, match="ALLOW_REAL_PROVIDERS"):
        provider_from_spec(spec, {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})


def test_llamacpp_specs_are_local_and_allowed(tmp_path: Path) -> None:
    bundled = provider_from_spec("llamacpp:smollm2", {})
    assert isinstance(bundled, LlamaCppProvider)
    assert bundled.model_path == find_smollm2_gguf()
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    explicit = provider_from_spec(f"llamacpp:{model}", {})
    assert isinstance(explicit, LlamaCppProvider)
    assert explicit.model_path == model
    with pytest.raises(ProviderConfigError, match="not found"):
        provider_from_spec(f"llamacpp:{tmp_path / 'missing.gguf'}", {})
