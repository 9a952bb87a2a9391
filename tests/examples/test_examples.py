"""The examples in ``examples/`` run, each against the scripted fake behind its real client.

* Anthropic: the SDK's own client and tool runner, its HTTP transport answered by a
  ScriptedProvider (Messages API JSON in and out; no network).
* OpenAI-compatible: memdir's OpenAI provider talking HTTP to a real server on 127.0.0.1 whose
  replies come from a ScriptedProvider.
Both run two sessions and check that the second one is given what the first one saved.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx2
import pytest
from anthropic import AsyncAnthropic

from memdir.llm.base import Completion, CompletionRequest, Message
from memdir.llm.scripted import ScriptedProvider
from memdir.store import MemoryStore
from tests.llm.conftest import LoopbackAPI, Received

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MEMO = "---\nname: {name}\ndescription: {description}\ntype: {type}\n---\n{body}\n"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root, {"HOME": str(tmp_path / "home"), "MEMDIR_POLICY_SETTINGS": str(tmp_path / "p")}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(block["text"])
        elif block.get("type") == "tool_result":
            parts.append(_text(block.get("content", "")))
    return "\n".join(parts)


# -- Anthropic: the SDK's transport answered by the scripted fake ----------------------------


def anthropic_client(fake: ScriptedProvider, bodies: list[dict[str, Any]]) -> AsyncAnthropic:
    async def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        bodies.append(body)
        messages = [Message(m["role"], _text(m["content"]) or "-") for m in body["messages"]]
        reply = await fake.complete(
            CompletionRequest(system=_text(body.get("system")), messages=messages)
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
        content += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.input}
            for c in reply.tool_calls
        ]
        return httpx2.Response(
            200,
            json={
                "id": f"msg_{len(bodies)}", "type": "message", "role": "assistant",
                "model": body["model"], "content": content, "stop_reason": reply.stop_reason,
                "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        )  # fmt: skip

    transport = httpx2.AsyncClient(transport=httpx2.MockTransport(handle))
    return AsyncAnthropic(api_key="test-key", base_url="http://127.0.0.1:9", http_client=transport)


async def test_anthropic_tool_runner_example(project: tuple[Path, dict[str, str]]) -> None:
    example = load("anthropic_memory_tool")
    cwd, env = project
    memo = MEMO.format(
        name="PR reviews", description="the user reviews pull requests on fridays",
        type="user", body="Reviews PRs on Fridays.",
    )  # fmt: skip
    create = {"command": "create", "path": "/memories/pr_reviews.md", "file_text": memo}
    fake = ScriptedProvider(
        [Completion.from_tool_call("memory", create), Completion.from_text("Noted.")]
    )
    bodies: list[dict[str, Any]] = []
    answers = await example.run_session(
        anthropic_client(fake, bodies), ["I review PRs on Fridays; keep that in mind."],
        env=env, cwd=cwd,
    )  # fmt: skip
    assert answers == ["Noted."]
    assert {"type": "memory_20250818", "name": "memory"} in bodies[0]["tools"]
    tool_result = bodies[1]["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and not tool_result.get("is_error")

    later = ScriptedProvider([Completion.from_text("On Fridays.")])
    bodies2: list[dict[str, Any]] = []
    answers = await example.run_session(
        anthropic_client(later, bodies2), ["When do I review pull requests?"], env=env, cwd=cwd
    )
    assert answers == ["On Fridays."]
    first_turn = bodies2[0]["messages"][0]["content"]
    assert first_turn[0]["text"] == "When do I review pull requests?"
    assert "<system-reminder>" in first_turn[1]["text"]
    assert "Reviews PRs on Fridays." in first_turn[1]["text"]
    fake.assert_exhausted()
    later.assert_exhausted()


# -- OpenAI-compatible: a loopback server answered by the scripted fake ----------------------


def openai_reply(reply: Completion) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.input)}}
            for c in reply.tool_calls
        ]  # fmt: skip
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "local",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }  # fmt: skip


def serve(server: LoopbackAPI, fake: ScriptedProvider) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = []

    def respond(received: Received) -> tuple[int, Any, dict[str, str]]:
        body = received.body
        bodies.append(body)
        system = "".join(m["content"] for m in body["messages"] if m["role"] == "system")
        turns = [
            Message("assistant" if m["role"] == "assistant" else "user", _text(m["content"]) or "-")
            for m in body["messages"] if m["role"] != "system"
        ]  # fmt: skip
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
        request = CompletionRequest(system=system, messages=turns, json_schema=schema)
        return 200, openai_reply(asyncio.run(fake.complete(request))), {}

    server.respond = respond
    return bodies


@pytest.mark.usefixtures("allow_real_providers")
async def test_openai_agent_loop_example(
    project: tuple[Path, dict[str, str]], loopback: LoopbackAPI
) -> None:
    example = load("openai_agent_loop")
    cwd, env = project
    from memdir.llm.factory import provider_from_spec

    provider = provider_from_spec(f"openai:local-model@{loopback.url}", {})
    store_dir = Path(env["HOME"]) / ".memdir" / "projects"
    memory_dir: Path | None = None

    def write_reply(request: CompletionRequest) -> Completion:
        nonlocal memory_dir
        memory_dir = next(store_dir.glob("*/memory"))
        memo = MEMO.format(
            name="Staging DB", description="staging database listens on port 6543",
            type="project", body="Port 6543.",
        )  # fmt: skip
        return Completion.from_tool_call(
            "Write", {"file_path": str(memory_dir / "staging_db.md"), "content": memo}
        )

    main_steps: list[Any] = []
    fake = ScriptedProvider.always(lambda r: by_purpose_dynamic(r, main_steps, []))
    bodies = serve(loopback, fake)
    main_steps += [write_reply, lambda r: Completion.from_text("Saved: staging is on 6543.")]
    answers = await example.run_session(
        provider, ["Remember that our staging database listens on port 6543."], env=env, cwd=cwd
    )
    assert answers == ["Saved: staging is on 6543."]
    assert memory_dir is not None
    assert MemoryStore(memory_dir).read("staging_db.md").description == (
        "staging database listens on port 6543"
    )
    assert any(m["role"] == "tool" for m in bodies[-1]["messages"])

    main_steps += [lambda r: Completion.from_text("It listens on port 6543.")]
    fake2 = ScriptedProvider.always(lambda r: by_purpose_dynamic(r, main_steps, ["staging_db.md"]))
    bodies = serve(loopback, fake2)
    answers = await example.run_session(
        provider, ["Which port does the staging database use?"], env=env, cwd=cwd
    )
    assert answers == ["It listens on port 6543."]
    agent_calls = [b for b in bodies if "response_format" not in b]
    user_turn = agent_calls[0]["messages"][1]
    assert "<system-reminder>" in _text(user_turn["content"])
    assert "Port 6543." in _text(user_turn["content"])
    assert main_steps == []


def by_purpose_dynamic(
    request: CompletionRequest, main: list[Any], chosen: list[str]
) -> Completion:
    """Replies by what a request is for: recall selection, extraction, or the agent's turn."""
    if request.json_schema is not None:
        return Completion.from_json({"selected_memories": chosen})
    if "memory extraction" in request.messages[-1].text:
        return Completion.from_text("Nothing new to save.")
    step = main.pop(0)
    result: Completion = step(request)
    return result
