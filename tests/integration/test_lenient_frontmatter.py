"""Issue #9 item 1: a memory never disappears from scan, manifest or recall because of its YAML.

A Claude Code memory dir is full of descriptions like ``Q2 goal: ship X`` that strict YAML
refuses; before, such files were skipped with a warning by every reader.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from mcp import Client

from memdir.adapters.mcp_server import build_server
from memdir.cli.main import main
from memdir.recall.keyword import KeywordSelector
from memdir.store import MemoryStore

FILES = {
    "billing.md": "---\nname: Billing goal\ndescription: Q2 goal: ship the billing API\n"
    "type: project\n---\nThe billing API ships in Q2.\n",
    "style.md": "---\nname: Style\ndescription: [WIP] prefer *small* PRs & squash\n"
    "type: feedback\n---\nKeep PRs small.\n",
    "broken.md": "---\nname: x\n- y\n---\nDeploys happen on Tuesdays only.\n",
}


def make_dir(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text)
    return root


def test_cli_list_and_manifest_keep_every_memory(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["--dir", str(root), "manifest"], env={"HOME": str(tmp_path)}, stdout=out, stderr=err
    )
    assert code == 0 and err.getvalue() == ""  # nothing skipped, no warning
    lines = json.loads(out.getvalue())
    by_path = {row["path"]: row["line"] for row in lines}
    assert set(by_path) == set(FILES)
    assert by_path["billing.md"].endswith(": Q2 goal: ship the billing API")
    assert by_path["style.md"].endswith(": [WIP] prefer *small* PRs & squash")
    assert "[" not in by_path["broken.md"].split(")")[-1]  # kept, with an empty header


async def test_mcp_recall_finds_memories_whose_yaml_needed_repair(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    server = build_server(MemoryStore(root), selector=KeywordSelector())
    async with Client(server) as client:
        billing = await client.call_tool("memory_recall", {"query": "billing API goal for Q2"})
        # With an empty header the file name is what a header-only selector can match.
        deploys = await client.call_tool("memory_recall", {"query": "the broken note"})
    assert not billing.is_error and not deploys.is_error
    found = [m["path"] for m in billing.structured_content["memories"]]  # type: ignore[index]
    assert found and found[0] == "billing.md"
    found = [m["path"] for m in deploys.structured_content["memories"]]  # type: ignore[index]
    assert "broken.md" in found  # kept as a candidate with an empty header
