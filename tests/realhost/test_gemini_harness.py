"""The Gemini harness itself: the fake speaks the v1beta protocol the CLI's SDK parses, and the real
``gemini -p`` runs against it (print, resume, json and stream-json), with hooks and an MCP server."""

from __future__ import annotations

from tests.realhost.gemini_host import GeminiHost


def test_bare_prompt_gets_the_fakes_text_and_the_main_request_is_logged(gemini: GeminiHost) -> None:
    gemini.api.script("the answer is forty-two")
    first = gemini.prompt("what is the answer? (marker-alpha)")
    assert first.stdout.strip() == "the answer is forty-two"
    (main,) = gemini.api.main_requests()
    assert main.user_texts()[-1] == "what is the answer? (marker-alpha)"
    assert main.headers.get("x-goog-api-key", "").startswith("memdir-test-dummy")
