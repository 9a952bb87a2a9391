"""Re-record ``tests/fixtures/hosts/<host>/headless-*.json`` from the real CLIs (by hand, not a
test): what ``pi -p``, ``copilot``, ``qwen`` and ``cline`` print when memdir runs them as its model.

    PYTHONPATH=src python -m tests.realhost.record_headless_fixtures [pi|copilot|qwen|cline ...]

Each host's child is built by memdir's own provider (``invocation``), so the recording is of
exactly what memdir runs: once against the fake API replying with a tool call in text
(``headless-tool``), once with the API gone (``headless-unreachable``, the server closed).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import memdir.llm.base
from tests.realhost.fake_openai import FakeOpenAI
from tests.realhost.npm_host import KINDS, NpmHost

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"
CALL = 'Saving it.\n{"tool": "Write", "input": {"file_path": "a.md", "content": "x"}}'


def _run(host: NpmHost, name: str, case: str) -> None:
    module = importlib.import_module(f"memdir.llm.{name}_cli")
    provider = module.HostCliProvider("default", env=host.env)
    with tempfile.TemporaryDirectory() as home:
        call = provider.invocation("You are memdir's model.", "Remember: we use pnpm.", Path(home))
        done = subprocess.run(
            [str(host.cli), *call.args], input=call.stdin, env=call.env, cwd=home,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    tmp = str(host.root)
    record = {
        "returncode": done.returncode,
        "stdout": done.stdout.replace(tmp, f"/tmp/{name}-fixture"),
        "stderr": done.stderr.replace(tmp, f"/tmp/{name}-fixture"),
    }
    path = OUT / name / f"headless-{case}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{path}: exit {done.returncode}, {len(done.stdout)} chars")


def record(name: str) -> None:
    kind = KINDS[name]
    cli = kind.find_cli()
    assert cli is not None, kind.missing
    with tempfile.TemporaryDirectory() as root, FakeOpenAI() as api:
        host = NpmHost(kind=kind, cli=cli, api=api, root=Path(root))
        api.script(CALL)
        _run(host, name, "tool")
        api.__exit__(None, None, None)  # the API gone: what a network outage looks like
        _run(host, name, "unreachable")


if __name__ == "__main__":
    memdir.llm.base.ALLOW_REAL_PROVIDERS = True
    for name in sys.argv[1:] or ["pi", "copilot", "qwen", "cline"]:
        record(name)
