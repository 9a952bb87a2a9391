"""The Codex harness itself: the fake speaks the Responses API (checked with the official SDK),
and the real ``codex exec`` runs against it with hooks and an MCP server."""

from __future__ import annotations

from tests.realhost.codex_host import CodexHost


def test_bare_exec_gets_the_fake_reply_and_the_request_is_logged(codex: CodexHost) -> None:
    codex.api.script("the answer is forty-two")
    proc = codex.exec("what is the answer? (marker-alpha)")
    assert proc.stdout.strip() == "the answer is forty-two"
    (request,) = codex.api.model_requests()
    assert request.path == "/v1/responses" and request.body["stream"] is True
    assert request.message_texts("user")[-1] == "what is the answer? (marker-alpha)"
    assert request.headers["authorization"] == "Bearer sk-memdir-test-dummy-key-not-real"
    assert codex.api.escapes == []
