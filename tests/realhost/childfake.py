"""A small extension of the shared fake API for host-model tests: replies scripted for memdir's
own child CLI (a request offering memdir's relayed agent tools) come from their own queue, so
the user's session and the host's side requests never take them, whatever the timing."""

from __future__ import annotations

import json

from tests.realhost.fakeapi import DEFAULT_REPLY, FakeAnthropic, LoggedRequest, Reply

RELAYED = frozenset(f"mcp__memdir__{n}" for n in ("Read", "Grep", "Glob", "Bash", "Edit", "Write"))


def is_child(request: LoggedRequest) -> bool:
    """A request from memdir's child CLI: it offers memdir's relayed agent tools."""
    return bool(RELAYED & set(request.tool_names()))


class ChildAwareAnthropic(FakeAnthropic):
    def __init__(self) -> None:
        super().__init__()
        self._child: list[tuple[str | None, Reply]] = []

    def script_child(self, *replies: Reply | str, when: str | None = None) -> None:
        """Queue replies for child requests; with ``when``, only for a child whose request holds
        that text (the notes child and an extraction child may run at the same time)."""
        with self._lock:
            self._child.extend((when, Reply(text=r) if isinstance(r, str) else r) for r in replies)

    def child_requests(self) -> list[LoggedRequest]:
        with self._lock:
            return [r for r in self.requests if is_child(r)]

    def _record(self, request: LoggedRequest) -> Reply:
        if not is_child(request):
            return super()._record(request)
        with self._lock:
            self.requests.append(request)
            text = json.dumps(request.body)
            for i, (when, reply) in enumerate(self._child):
                if when is None or when in text:
                    del self._child[i]
                    return reply
            return Reply(text=DEFAULT_REPLY)
