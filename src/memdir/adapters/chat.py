"""A terminal agent on :class:`~memdir.runtime.MemoryRuntime`: the loop behind ``memdir chat``.

The agent gets the memory tools wrapped in the background agents' sandbox (read, grep, glob and
the read-only shell anywhere; Edit/Write only inside the memory dir), so it can look at the
project and save memories itself, and can change nothing else. Each turn follows the runtime's
order: recall prefetch -> attachments -> compaction check -> model (and tools) -> turn end.

Invariants: a provider failure ends the turn with a message and leaves the conversation as it was
before the turn (roles keep alternating); a slash command never reaches the model; the session
always ends through :meth:`MemoryRuntime.end`, so background writes are drained, not lost.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TextIO

from memdir.agent.policy import memory_agent_policy
from memdir.agent.tools import memory_tools
from memdir.agent.toolset import Toolset
from memdir.errors import MemdirError, PromptTooLongError, ProviderError
from memdir.llm.base import CompletionRequest, Message, Provider, ToolResultBlock
from memdir.runtime import MemoryRuntime

ReadLine = Callable[[str], Awaitable[str | None]]
CHAT_SYSTEM = (
    "You are a helpful assistant working in the user's project at {cwd}. You can read files, "
    "search them and run read-only shell commands; you can write only to your memory directory."
)
HELP = """\
/memory [list]         list saved memories
/memory show <file>    print one memory
/forget <file>         delete a memory
/compact               compact the conversation now
/dream                 consolidate memory now
/status                background work: recall, extraction, sync, ...
/recall on|off         show or hide recalled memories
/exit                  end the session (background work is finished first)"""


@dataclass
class ChatOptions:
    context_window: int = 200_000
    max_tool_rounds: int = 8
    max_tokens: int = 2048
    show_recall: bool = True
    recall_wait: float = 1.0


class ChatSession:
    def __init__(
        self,
        runtime: MemoryRuntime,
        provider: Provider,
        out: TextIO,
        *,
        options: ChatOptions | None = None,
        toolset: Toolset | None = None,
    ) -> None:
        self.rt = runtime
        self.provider = provider
        self.out = out
        self.options = options or ChatOptions()
        self.toolset = toolset or memory_agent_policy(
            memory_tools(runtime.store, cwd=runtime.paths.cwd), runtime.memory_dir
        )
        self.messages: list[Message] = []
        self.system = ""

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    async def run(self, read_line: ReadLine) -> int:
        report = await self.rt.start()
        self.system = CHAT_SYSTEM.format(cwd=self.rt.paths.cwd)
        if report.system_prompt:
            self.system += "\n\n" + report.system_prompt
        self.say(f"memdir chat · memory: {self.rt.memory_dir} · /help for commands")
        for notice in report.notices:
            self.say(f"· {notice}")
        try:
            while True:
                self._flush_notices()
                line = await read_line("> ")
                if line is None:
                    break
                text = line.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    if not await self.command(text):
                        break
                    continue
                await self.user_turn(text)
        finally:
            self.say("· finishing background work…")
            end = await self.rt.end()
            for notice in end.notices:
                self.say(f"· {notice}")
            for name in end.timed_out:
                self.say(f"· {name} did not finish in time and was stopped")
        return 0

    def _flush_notices(self) -> None:
        for notice in self.rt.notices():
            self.say(f"· {notice}")

    async def user_turn(self, text: str) -> None:
        before = list(self.messages)
        self.rt.on_user_message(text)
        attachments = await self.rt.attachments(wait=self.options.recall_wait)
        if attachments and self.options.show_recall:
            self.say("  ↳ recalled: " + ", ".join(a.filename for a in attachments))
        messages = self.rt.attach([*self.messages, Message("user", text)], attachments)
        try:
            messages = await self._model_loop(messages)
        except ProviderError as exc:
            self.say(f"model error: {exc}")
            self.messages = before
            return
        self.messages = messages
        await self.rt.on_turn_end(self.messages)

    async def _model_loop(self, messages: list[Message]) -> list[Message]:
        specs = self.toolset.specs()
        for _ in range(self.options.max_tool_rounds):
            messages = await self.rt.before_model_call(
                messages, context_window=self.options.context_window
            )
            request = CompletionRequest(
                system=self.system,
                messages=tuple(messages),  # a snapshot: the list grows after the call
                max_tokens=self.options.max_tokens,
                tools=specs,
            )
            try:
                completion = await self.provider.complete(request)
            except PromptTooLongError:  # the reactive path: compact once, then retry
                messages, note = await self.rt.compact_now(
                    messages, context_window=self.options.context_window
                )
                self.say(f"· {note}")
                retry = replace(request, messages=tuple(messages))
                completion = await self.provider.complete(retry)
            messages.append(completion.as_message())
            if completion.text:
                self.say(completion.text)
            if not completion.tool_calls:
                return messages
            results = await asyncio.gather(
                *(self.toolset.call(c.name, c.input) for c in completion.tool_calls)
            )
            blocks = []
            for call, result in zip(completion.tool_calls, results, strict=True):
                self.say(
                    f"  [{call.name}] {'error: ' if result.is_error else ''}"
                    + _brief(result.content)
                )
                if call.name == "Read" and not result.is_error:
                    self.rt.recall_session.mark_read([str(call.input.get("file_path", ""))])
                blocks.append(ToolResultBlock(call.id, result.content, result.is_error))
            messages.append(Message("user", blocks))
        self.say("(stopped: too many tool rounds in one turn)")
        return messages

    async def command(self, text: str) -> bool:
        """Run a slash command; False when the session should end."""
        try:
            words = shlex.split(text)
        except ValueError as exc:
            self.say(f"cannot parse command: {exc}")
            return True
        name, args = words[0], words[1:]
        if name in ("/exit", "/quit"):
            return False
        handler = {
            "/help": self._help,
            "/memory": self._memory,
            "/forget": self._forget,
            "/status": self._status,
            "/recall": self._recall,
            "/compact": self._compact,
            "/dream": self._dream,
        }.get(name)
        if handler is None:
            self.say(f"unknown command {name}; /help lists them")
            return True
        try:
            await handler(args)
        except MemdirError as exc:
            self.say(f"error: {exc}")
        return True

    async def _help(self, args: list[str]) -> None:
        self.say(HELP)

    async def _memory(self, args: list[str]) -> None:
        store = self.rt.store
        if args[:1] == ["show"] and len(args) == 2:
            self.say(store.read_text(args[1]).rstrip("\n"))
            return
        if args and args != ["list"]:
            self.say("usage: /memory [list] | /memory show <file>")
            return
        headers = await asyncio.to_thread(store.list)
        if not headers:
            self.say("(no memories yet)")
        for h in headers:
            self.say(f"  {h.filename}  [{h.type or '-'}]  {h.description or ''}".rstrip())

    async def _forget(self, args: list[str]) -> None:
        if len(args) != 1:
            self.say("usage: /forget <file>   (/memory lists the files)")
            return
        removed = await asyncio.to_thread(self.rt.store.delete, args[0])
        self.say(f"forgot {removed}")

    async def _status(self, args: list[str]) -> None:
        for s in self.rt.status():
            timing = f" {s.last_seconds:.2f}s" if s.last_seconds is not None else ""
            error = f" — {s.last_error}" if s.last_error else ""
            self.say(f"  {s.name:<15}{s.state:<10} runs {s.runs}{timing}  {s.detail}{error}")

    async def _recall(self, args: list[str]) -> None:
        if args in (["on"], ["off"]):
            self.options.show_recall = args == ["on"]
        self.say(f"recalled memories are {'shown' if self.options.show_recall else 'hidden'}")

    async def _compact(self, args: list[str]) -> None:
        self.messages, note = await self.rt.compact_now(
            self.messages, context_window=self.options.context_window
        )
        self.say(note)

    async def _dream(self, args: list[str]) -> None:
        self.say(await self.rt.dream_now())


def _brief(text: str, limit: int = 100) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"
