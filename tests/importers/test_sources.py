"""Each source read from real examples (tests/fixtures/import, see its README) and hostile input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.errors import ImportSourceError
from memdir.importers.base import MAX_JSON_DEPTH
from memdir.importers.service import get_source
from memdir.model import MemoryType
from tests.importers.conftest import FIXTURES


def read(source: str, path: Path) -> list:  # type: ignore[type-arg]
    return list(get_source(source).read(path))


def test_gemini_reads_only_the_added_memories_section(tmp_path: Path) -> None:
    items = read("gemini", FIXTURES / "gemini" / "GEMINI.md")
    assert len(items) == 7
    assert items[0].body.startswith("Always start and restart the server in the background.")
    assert all(i.source == "gemini" for i in items)
    empty = tmp_path / "memory"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a memory file\n")
    with pytest.raises(ImportSourceError, match="holds no Gemini CLI memory"):
        read("gemini", tmp_path)


GEMINI_HOME = FIXTURES / "gemini-0.61" / ".gemini"


def test_gemini_0_44_and_later_free_form_files_and_private_project_memory() -> None:
    """Issue #39.2: Gemini CLI >= 0.44 has no save_memory; both files failed with "has no
    '## Gemini Added Memories' section"."""
    items = read("gemini", GEMINI_HOME)
    by_fact = {i.fact: i for i in items}
    assert {i.skip for i in items} == {None}
    personal = by_fact["I prefer pytest over unittest in every Python project."]
    assert personal.type != MemoryType.PROJECT and "personal memory" in personal.body
    assert "My editor is Neovim with LazyVim; never suggest VS Code settings." in by_fact
    port = by_fact["On my machine the Postgres container listens on port 55432, not 5432."]
    assert port.extra["source_project"] == "/home/ana/src/payments-api"  # from projects.json
    runbook = next(i for i in items if i.source_id.endswith("release-runbook.md"))
    assert runbook.name == "Release runbook" and "git tag -s" in runbook.body
    assert runbook.description == "how I cut a release from my laptop"  # the pointer's words
    assert any(i.source_id.endswith("sandbox-accounts.md") for i in items)  # not pointed at
    assert len(items) == 3 + 2 + 2  # no heading, no pointer line, no file twice
    # the same folder, or its MEMORY.md, read on their own
    folder = GEMINI_HOME / "tmp" / "payments-api" / "memory"
    assert len(read("gemini", folder)) == len(read("gemini", folder / "MEMORY.md")) == 4


def test_gemini_default_follows_gemini_cli_home(tmp_path: Path) -> None:
    source = get_source("gemini")
    assert source.default_path(tmp_path, {}) == tmp_path / ".gemini"
    custom = {"GEMINI_CLI_HOME": str(tmp_path / "alt")}
    assert source.default_path(tmp_path, custom) == tmp_path / "alt" / ".gemini"


@pytest.mark.parametrize(
    ("source", "variable", "value", "expected"),
    [
        ("claude-code", "CLAUDE_CONFIG_DIR", "cc", "cc/projects"),
        ("claude-mem", "CLAUDE_MEM_DATA_DIR", "cm", "cm/claude-mem.db"),
        ("codex", "CODEX_HOME", "cx", "cx/memories"),
        ("basic-memory", "BASIC_MEMORY_HOME", "bm", "bm"),
    ],
)
def test_import_defaults_follow_the_hosts_own_location_variables(
    tmp_path: Path, source: str, variable: str, value: str, expected: str
) -> None:
    """Issue #39.10."""
    env = {variable: str(tmp_path / value)}
    assert get_source(source).default_path(tmp_path, env) == tmp_path / expected


def test_basic_memory_default_is_its_configured_default_project(tmp_path: Path) -> None:
    config = tmp_path / ".basic-memory" / "config.json"
    config.parent.mkdir()
    config.write_text(
        json.dumps({"default_project": "work", "projects": {"main": "/x", "work": "/kb/work"}})
    )
    assert get_source("basic-memory").default_path(tmp_path, {}) == Path("/kb/work")
    config.write_text("{not json")
    assert get_source("basic-memory").default_path(tmp_path, {}) == tmp_path / "basic-memory"


def test_gemini_section_ends_at_the_next_heading(tmp_path: Path) -> None:
    path = tmp_path / "GEMINI.md"
    path.write_text(
        "## Gemini Added Memories\n- The user runs Arch Linux.\n\n## Build\n- make all\n"
    )
    assert [i.fact for i in read("gemini", path)] == ["The user runs Arch Linux."]


def test_mcp_memory_entities_become_memories_with_their_relations() -> None:
    items = {
        i.source_id: i for i in read("mcp-memory", FIXTURES / "mcp-memory" / "think-tank.jsonl")
    }
    ml = items["entity:Machine Learning"]
    assert ml.skip is None and "- utilizes [[Deep Learning]]" in ml.body
    task = items["entity:Task-af59e7ba-fe81-4c8e-aefb-a2376665baaa"]
    assert task.skip is not None and task.skip.startswith("ephemeral task state")


def test_mcp_memory_people_are_user_memories_and_work_logs_are_skipped() -> None:
    items = read("mcp-memory", FIXTURES / "mcp-memory" / "memory-graph.jsonl")
    by_id = {i.source_id: i for i in items}
    assert by_id["entity:Alice"].type is MemoryType.USER
    skipped = [i.skip for i in items if i.skip]
    assert any(s.startswith("git history") for s in skipped)  # "FIXED: Added limit/offset ..."


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("mem0", "[" * 200_000 + "]" * 200_000),
        ("mcp-memory", '{"name": "x", "observations": ' + "[" * 100_000 + "]" * 100_000 + "}\n"),
    ],
)
def test_deeply_nested_json_is_refused_in_one_line(tmp_path: Path, source: str, text: str) -> None:
    path = tmp_path / "input.json"
    path.write_text(text)
    with pytest.raises(ImportSourceError, match=f"deeper than {MAX_JSON_DEPTH}") as exc:
        read(source, path)
    assert "\n" not in str(exc.value)


def test_a_jsonl_line_of_megabytes_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    big = json.dumps({"name": "big", "observations": ["x" * 2_000_000]})
    path.write_text(
        big
        + "\n"
        + json.dumps(
            {"name": "Ana", "entityType": "person", "observations": ["Leads the data team"]}
        )
        + "\n"
    )
    huge, ana = read("mcp-memory", path)
    assert huge.skip is not None and "characters" in huge.skip
    assert ana.skip is None


def test_mcp_memory_refuses_a_line_that_is_not_an_entity(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text(
        json.dumps({"type": "entity", "name": "a", "observations": ["x"]}) + "\n[1, 2]\n"
    )
    with pytest.raises(ImportSourceError, match=":2: not an MCP memory"):
        read("mcp-memory", path)


def test_mem0_exports_in_both_api_shapes() -> None:
    (v1,) = read("mem0", FIXTURES / "mem0" / "get_all_v1.json")
    assert v1.source_id == "f38b689d-6b24-45b7-bced-17fbb4d8bac7" and v1.created == "2023-02-25"
    veg, seat, deleted = read("mem0", FIXTURES / "mem0" / "get_all_v2.json")
    assert veg.type is MemoryType.USER and veg.name.startswith("User is a vegetarian")
    assert veg.extra["tags"] == ["food", "health"]
    assert seat.name.startswith("User prefers window seats")
    assert deleted.skip == "deleted in mem0"


def test_mem0_refuses_what_is_not_an_export(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(ImportSourceError, match="not a mem0 export"):
        read("mem0", path)
    path.write_text("{not json")
    with pytest.raises(ImportSourceError, match="not valid JSON"):
        read("mem0", path)


def test_basic_memory_notes_keep_their_body_and_type_from_categories() -> None:
    items = {i.source_id: i for i in read("basic-memory", FIXTURES / "basic-memory")}
    deploy = items["deploy-conventions.md"]
    assert deploy.type is MemoryType.FEEDBACK and deploy.name == "Deploy conventions"
    assert "- part_of [[Engineering Handbook]]" in deploy.body
    assert deploy.extra["source_permalink"] == "engineering/deploy-conventions"


def test_codex_memories_notes_and_session_input(tmp_path: Path) -> None:
    items = read("codex", FIXTURES / "codex")
    facts = [i.fact for i in items if not i.skip]
    assert "The user prefers pnpm over npm for every JavaScript project." in facts
    assert any("grafana.example.test" in f for f in facts)
    assert {i.source_id for i in items if i.skip} == {"raw_memories.md", "rollout_summaries"}
    with pytest.raises(ImportSourceError, match="no Codex memories"):
        read("codex", tmp_path)


def test_claude_code_reads_every_project_but_not_logs_or_symlinks(tmp_path: Path) -> None:
    items = read("claude-code", FIXTURES / "claude-code")
    ids = sorted(i.source_id for i in items)
    assert ids == [
        "-home-ana-work-api/no_mocks.md",
        "-home-ana-work-api/user_role.md",
        "-home-ana-work-webapp/no_mocks_in_integration_tests.md",
    ]
    assert all(not i.filter for i in items)
    project = tmp_path / "projects" / "p" / "memory"
    project.mkdir(parents=True)
    outside = tmp_path / "secret.md"
    outside.write_text("---\nname: outside\n---\nnot in the dir\n")
    (project / "link.md").symlink_to(outside)
    assert read("claude-code", tmp_path / "projects") == []


@pytest.mark.parametrize("source", ["basic-memory", "claude-code"])
def test_a_fifo_named_like_a_note_is_skipped_with_a_reason(tmp_path: Path, source: str) -> None:
    """Issue #39.5: the directory walks read every ``.md`` with a blocking read and hung."""
    import os

    from tests.fifo import returns_promptly

    root = tmp_path / "notes" if source == "basic-memory" else tmp_path / "proj" / "memory"
    root.mkdir(parents=True)
    (root / "deploys.md").write_text(
        "---\nname: Deploys\ndescription: how deploys run\ntype: project\n---\n"
        "- [decision] Deploys go through fly.io\n"
    )
    os.mkfifo(root / "pipe.md")
    items = returns_promptly(lambda: list(get_source(source).read(root)), [root / "pipe.md"])
    by_id = {item.source_id.rsplit("/", 1)[-1]: item for item in items}
    assert by_id["deploys.md"].skip is None
    assert by_id["pipe.md"].skip is not None and "regular file" in by_id["pipe.md"].skip


def test_one_bad_observation_does_not_drop_its_entity(tmp_path: Path) -> None:
    """Issue #39.3: an entity with five observations, one holding a token, was skipped whole
    (its facts and its relation lost); a 70 KB observation did the same."""
    from memdir.importers.plan import plan_import
    from memdir.store import MemoryStore

    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    entity = {
        "type": "entity",
        "name": "payments-service",
        "entityType": "service",
        "observations": [
            "Written in Python 3.12 with FastAPI",
            "Uses Postgres 16 for the ledger",
            f"The deploy token is {token}",
            "x" * 70_000,
            "Owned by the billing team",
        ],
    }
    relation = {
        "type": "relation",
        "from": "payments-service",
        "relationType": "calls",
        "to": "ledger",
    }
    path = tmp_path / "memory.jsonl"
    path.write_text(json.dumps(entity) + "\n" + json.dumps(relation) + "\n")
    items = read("mcp-memory", path)
    plan = plan_import(MemoryStore(tmp_path / "mem"), "mcp-memory", str(path), items)
    [kept] = [v for v in plan.verdicts if v.action == "write"]
    body = plan.writes[kept.target].body
    assert "FastAPI" in body and "Postgres 16" in body and "billing team" in body
    assert "calls [[ledger]]" in body
    assert token not in body and "x" * 1000 not in body
    left_out = [v for v in plan.verdicts if v.action == "skip"]
    assert sorted(v.kind for v in left_out) == ["credential", "source"]
    assert all(token not in f"{v.name} {v.reason} {v.source_id}" for v in left_out)


def test_codex_blocks_and_requests_as_a_person_means_them(tmp_path: Path) -> None:
    """Issue #39.6: a block's rollout line was glued onto the fact before it when no blank line
    came first; requests in ad-hoc notes were imported as facts beside what they update."""
    root = tmp_path / "memories"
    notes = root / "extensions" / "ad_hoc" / "notes"
    notes.mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        "# Memories\n\n## CI\n"
        "- CI flakes come from the shared Redis; rerun with REDIS_ISOLATED=1.\n"
        "---\n"
        "- 2026-02-20T08-00-00-ci-flakes.md (success, cwd=/home/u/repo)\n"
        "- CI runs on Node 20 in the lint and test jobs.\n"
        "- The user prefers tabs for indentation.\n"
    )
    (notes / "01-forget.md").write_text("Forget the earlier note that I prefer tabs.\n")
    (notes / "02-update.md").write_text("Update: CI moved from Node 20 to Node 22\n")
    (notes / "03-fact.md").write_text("Release tags are signed with the team GPG key.\n")
    items = read("codex", root)
    kept = [i.fact for i in items if i.skip is None]
    assert kept == [
        "CI flakes come from the shared Redis; rerun with REDIS_ISOLATED=1.",
        "CI moved from Node 20 to Node 22",
        "Release tags are signed with the team GPG key.",
    ]
    skipped = {i.source_id: i.skip for i in items if i.skip}
    assert skipped["MEMORY.md:ci runs on node 20 in the lint and test jobs"].startswith(
        "superseded: the request in notes/02-update.md"
    )
    assert "forgot 1: The user prefers tabs" in skipped["notes/01-forget.md#request"]
    assert not any("2026-02-20" in (i.fact or "") for i in items)


@pytest.mark.parametrize(
    ("note", "target"),
    [
        ("Forget the earlier note that I prefer tabs", "I prefer tabs"),
        ("please delete the memory about the old VPN host.", "the old VPN host"),
        ("The deploy uses fly.io", None),  # a fact, not a request
    ],
)
def test_requests_are_told_from_facts(note: str, target: str | None) -> None:
    from memdir.importers.requests import as_request

    request = as_request(note)
    assert (request.target if request else None) == target


def test_mem0_two_users_stay_two_people_and_the_openmemory_zip_reads(tmp_path: Path) -> None:
    """Issue #39.8: an export with several users was flattened into "User …" memories, "Name is
    Alice Chen" was typed feedback, and OpenMemory's export zip failed with "not UTF-8"."""
    import zipfile

    rows = [
        {"id": "1", "memory": "Name is Alice Chen", "user_id": "alice"},
        {"id": "2", "memory": "Prefers window seats", "user_id": "alice"},
        {"id": "3", "memory": "Prefers aisle seats", "user_id": "bob"},
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"results": rows}))
    items = read("mem0", path)
    assert [i.type for i in items] == [MemoryType.USER] * 3
    facts = [i.fact for i in items]
    assert facts == [
        "alice's name is Alice Chen",
        "alice prefers window seats",
        "bob prefers aisle seats",
    ]
    assert [i.extra["source_user"] for i in items] == ["alice", "alice", "bob"]
    one = tmp_path / "one.json"
    one.write_text(json.dumps(rows[:1]))
    [alone] = read("mem0", one)
    assert alone.type is MemoryType.USER and alone.fact == "User name is Alice Chen"
    archive = tmp_path / "openmemory-export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("export/memories.json", json.dumps({"memories": [
            {"id": "m1", "content": "Uses Neovim", "user_id": "alice", "state": "active"},
            {"id": "m2", "content": "Old fact", "user_id": "alice", "state": "deleted"},
        ]}))  # fmt: skip
        zf.writestr("export/memories.jsonl.gz", b"\x1f\x8b not json")
    kept, gone = read("mem0", archive)
    assert kept.skip is None and kept.fact == "User uses Neovim" and gone.skip == "deleted in mem0"
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(broken, "w") as zf:
        zf.writestr("readme.txt", "no export here")
    with pytest.raises(ImportSourceError, match=r"no memories\.json"):
        read("mem0", broken)


def test_the_same_fact_under_two_entities_is_one_memory_typed_as_a_rule(tmp_path: Path) -> None:
    """Issue #39.11 and .9: "payments-service" and "payments" each holding "Integration tests
    must use the real PostgreSQL, never mocks" became two memories, typed reference, described
    "When payments comes up: …"."""
    from memdir.importers.plan import plan_import
    from memdir.store import MemoryStore

    rule = "Integration tests must use the real PostgreSQL, never mocks"
    rows = [
        {"type": "entity", "name": "payments-service", "entityType": "service",
         "observations": [rule, "Never call the card API from tests"]},
        {"type": "entity", "name": "payments", "entityType": "service", "observations": [rule]},
    ]  # fmt: skip
    path = tmp_path / "memory.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    items = read("mcp-memory", path)
    plan = plan_import(MemoryStore(tmp_path / "mem"), "mcp-memory", str(path), items)
    [written] = plan.writes.values()
    assert written.body.count(rule) == 1 and "Also recorded under: payments." in written.body
    assert written.type == "feedback"
    assert not written.description.startswith("When ") and rule in written.description
    assert written.extra["merged_from"] == ["entity:payments"]
    [absorbed] = [v for v in plan.verdicts if v.source_id == "entity:payments"]
    assert (
        absorbed.action == "skip" and "already imported under payments-service" in absorbed.reason
    )


def test_imported_names_and_bodies_read_as_a_person_wrote_them() -> None:
    """Issue #39.9: "How to apply" lines made up from the fact ("…touches forget the earlier
    note that I"), names cut at a dangling word ("User is a data scientist and fairly")."""
    from memdir.importers.base import title_of
    from memdir.importers.facts import fact_item

    long = "User is a data scientist and fairly new to the Rust ecosystem but writes Python"
    assert title_of(long) == "User is a data scientist and fairly new…"
    item = fact_item("mem0", "1", "Always run the linter before committing", origin="a test")
    assert "How to apply" not in item.body and item.type is MemoryType.FEEDBACK
    told = fact_item("mem0", "2", "Use pnpm", origin="a test", how="in every JS repo here")
    assert "**How to apply:** in every JS repo here" in told.body


def test_basic_memory_standups_are_skipped_and_tags_are_not_words(tmp_path: Path) -> None:
    """Issue #39.9: standup/log notes were imported whole, "#tag" syntax in the description."""
    root = tmp_path / "kb"
    (root / "daily").mkdir(parents=True)
    (root / "standup-2026-03-02.md").write_text(
        "---\ntitle: Standup 2026-03-02\ntype: note\n---\n- [status] Fixed the login bug #auth\n"
    )
    (root / "daily" / "notes.md").write_text("---\ntitle: Tuesday\n---\n- [status] Reviews\n")
    (root / "log.md").write_text("---\ntitle: Week 9\ntype: log\n---\n- [status] Shipped\n")
    (root / "deploys.md").write_text(
        "---\ntitle: Deploys\ntype: note\n---\n- [rule] Deploys go through fly.io #ops #infra\n"
    )
    items = {i.source_id: i for i in read("basic-memory", root)}
    assert items["deploys.md"].skip is None
    assert "#" not in items["deploys.md"].description
    for log in ("standup-2026-03-02.md", "daily/notes.md", "log.md"):
        assert items[log].skip is not None and "log or standup" in items[log].skip


def test_a_claude_code_file_with_broken_yaml_is_named_from_its_text(tmp_path: Path) -> None:
    """Issue #39.9: a broken-YAML file was imported as a memory named "[unclosed"."""
    memory = tmp_path / "proj" / "memory"
    memory.mkdir(parents=True)
    (memory / "broken.md").write_text(
        "---\nname: [unclosed\ndescription: x\ntype: project\n---\nThe deploy uses fly.io.\n"
    )
    [item] = read("claude-code", memory)
    assert item.name == "The deploy uses fly.io" and item.skip is None


def test_a_jsonl_source_is_read_line_by_line_within_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """memory.jsonl is streamed (a 50 MB file is not held twice); an endless line stops at the
    source's size bound with one clear line, and a non-UTF-8 line is named by its number."""
    import memdir.importers.base as base

    path = tmp_path / "memory.jsonl"
    good = json.dumps({"type": "entity", "name": "db", "entityType": "service",
                       "observations": ["Staging Postgres listens on port 5433"]})  # fmt: skip
    path.write_bytes(b"\xef\xbb\xbf" + good.encode() + b"\r\n" + b"\n")
    (item,) = read("mcp-memory", path)
    assert "port 5433" in item.body

    path.write_bytes(good.encode() + b"\n" + b'{"name": "caf\xe9"}\n')
    with pytest.raises(ImportSourceError, match=r"memory.jsonl:2: not UTF-8"):
        read("mcp-memory", path)

    monkeypatch.setattr(base, "MAX_SOURCE_BYTES", 4096)
    path.write_bytes(good.encode() + b"\n" + b"x" * 1_000_000)
    with pytest.raises(ImportSourceError, match="over 0 MB") as exc:
        read("mcp-memory", path)
    assert "\n" not in str(exc.value)
