"""LLM providers behind one small protocol, plus a scripted fake for tests.

Importing this package loads no SDK: the Anthropic, OpenAI and llama.cpp providers import their
libraries lazily and raise ``MissingExtraError`` naming the extra to install.
"""

from memdir.llm.base import (
    Completion,
    CompletionRequest,
    Message,
    Provider,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
    estimate_message_tokens,
    estimate_tokens,
)
from memdir.llm.factory import provider_from_spec
from memdir.llm.retry import RetryingProvider, RetryPolicy
from memdir.llm.scripted import ScriptedProvider, ScriptExhausted

__all__ = [
    "Completion",
    "CompletionRequest",
    "Message",
    "Provider",
    "RetryPolicy",
    "RetryingProvider",
    "ScriptExhausted",
    "ScriptedProvider",
    "TextBlock",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Usage",
    "estimate_message_tokens",
    "estimate_tokens",
    "provider_from_spec",
]
