"""The Memories page through the app: list, filter, open, and every write through the store."""

from __future__ import annotations

import re

import pytest

from memdir.index import read_entrypoint
from tests.ui.conftest import Ui, hidden


@pytest.fixture
def three(ui: Ui) -> Ui:
    ui.store.create("Deploy day", "deploys go out on Tuesdays", "project", "Tuesdays.\n")
    ui.store.create("Package manager", "user prefers pnpm over npm", "feedback", "pnpm.\n")
    ui.store.create("Editor", "user edits in neovim", "user", "nvim.\n")
    return ui


def test_list_filter_and_open(three: Ui) -> None:
    client = three.client()
    page = client.get("/memories").text
    for name in ("Deploy day", "Package manager", "Editor"):
        assert name in page
    filtered = client.get("/memories?q=pnpm").text
    assert "Package manager" in filtered and "Deploy day" not in filtered
    by_type = client.get("/memories?type=user").text
    assert "Editor" in by_type and "Package manager" not in by_type
    shown = client.get("/memory/deploy_day.md").text
    assert "deploys go out on Tuesdays" in shown and "<p>Tuesdays.</p>" in shown


def test_empty_dir_says_how_memories_get_made(ui: Ui) -> None:
    page = ui.client().get("/memories").text
    assert "No memories yet" in page and "memdir add" in page


def test_edit_changes_the_file_and_memory_md(three: Ui) -> None:
    client = three.client()
    page = client.get("/memory/deploy_day.md").text
    done = three.post(
        client,
        "/save/deploy_day.md",
        {
            "hash": hidden(page, "hash"),
            "name": "Deploy day",
            "description": "deploys go out on Wednesdays now",
            "type": "project",
            "body": "Wednesdays.\r\n",
        },
    )
    assert "saved deploy_day.md" in done
    text = (three.mem / "deploy_day.md").read_text()
    assert "description: deploys go out on Wednesdays now" in text
    assert text.endswith("---\nWednesdays.\n")  # CRLF from the browser stored as LF
    assert "deploys go out on Wednesdays now" in read_entrypoint(three.mem)


def test_an_edit_over_a_change_on_disk_is_refused(three: Ui) -> None:
    client = three.client()
    page = client.get("/memory/editor.md").text
    three.store.edit("editor.md", "nvim.", "helix.")  # another agent, meanwhile
    done = three.post(
        client,
        "/save/editor.md",
        {"hash": hidden(page, "hash"), "name": "Editor", "description": "x", "type": "user"},
    )
    assert "changed" in done.lower()
    assert "helix." in (three.mem / "editor.md").read_text()


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [("name", " ", "name must not be empty"), ("type", "nonsense", "type must be one of")],
)
def test_bad_frontmatter_is_refused_before_save(
    three: Ui, field: str, value: str, error: str
) -> None:
    before = (three.mem / "editor.md").read_bytes()
    form = {"name": "Editor", "description": "d", "type": "user", "body": "b"}
    form[field] = value
    done = three.post(three.client(), "/save/editor.md", form)
    assert error in done
    assert (three.mem / "editor.md").read_bytes() == before


def test_create_rename_retire_delete(three: Ui) -> None:
    client = three.client()
    made = three.post(
        client, "/new", {"name": "Release", "description": "release notes", "type": "project"}
    )
    assert "created release.md" in made and (three.mem / "release.md").is_file()
    three.post(client, "/rename/release.md", {"new_path": "releases.md"})
    assert (three.mem / "releases.md").is_file() and not (three.mem / "release.md").exists()
    assert "(releases.md)" in read_entrypoint(three.mem)
    retired = three.post(client, "/retire/releases.md", {"reason": "moved to the wiki"})
    assert "retired releases.md" in retired
    assert "retired_reason: moved to the wiki" in (three.mem / "releases.md").read_text()
    assert "releases.md" not in read_entrypoint(three.mem)
    listed = client.get("/memories?status=retired").text
    assert "Release" in listed and "moved to the wiki" in listed
    refused = three.post(client, "/delete/releases.md", {"confirm": "wrong.md"})
    assert "to confirm the delete" in refused and (three.mem / "releases.md").is_file()
    three.post(client, "/delete/releases.md", {"confirm": "releases.md"})
    assert not (three.mem / "releases.md").exists()


def test_supersession_chain_is_shown(three: Ui) -> None:
    client = three.client()
    three.post(
        client,
        "/retire/editor.md",
        {"reason": "switched editors", "superseded_by": "package_manager.md"},
    )
    page = client.get("/memory/editor.md").text
    assert "switched editors" in page
    assert 'href="/memory/package_manager.md"' in page
    newer = client.get("/memory/package_manager.md").text
    assert "replaces" in newer and 'href="/memory/editor.md"' in newer


def test_a_credential_in_private_memory_is_warned_about(three: Ui) -> None:
    key = "AKIA" + "Q3EGRIXLEFH5TJVP"
    done = three.post(
        three.client(),
        "/new",
        {"name": "Creds", "description": "aws", "type": "reference", "body": f"key {key}\n"},
    )
    warnings = re.findall(r'<p class="flash warning"[^>]*>(.*?)</p>', done, re.S)
    assert "created creds.md" in done and "AWS access key" in " ".join(warnings)
    assert key not in " ".join(warnings)  # the warning names the rule, never the value


def test_memory_md_drift_is_highlighted(three: Ui) -> None:
    index = three.mem / "MEMORY.md"
    index.write_text(index.read_text() + "- [Gone](gone.md) — deleted by hand\n")
    (three.mem / "editor.md").rename(three.mem / "by_hand.md")
    page = three.client().get("/index").text
    assert "drift" in page and "dead link: no such file" in page
    assert "by_hand.md" in page and "not indexed" in page
    three.post(three.client(), "/index/rebuild", {})
    assert "gone.md" not in index.read_text() and "by_hand.md" in index.read_text()


def test_the_memory_page_shows_its_evidence(ui: Ui) -> None:
    """Issue #37: each memory's verdict against the project's code is on its page."""
    from tests.evidence.conftest import DB_V1, DB_V2, Repo

    repo = Repo.__new__(Repo)  # the project is already a git repository: drive it
    repo.root, repo.clock = ui.project, 1_780_000_000
    repo.git("config", "user.email", "dev@example.com")
    repo.git("config", "user.name", "Dev")
    repo.commit("db", {"src/db.py": DB_V1})
    memory = ui.store.create("DB driver", "how we reach PostgreSQL", "project",
                          "`src/db.py` connects with `psycopg2`.\n")  # fmt: skip
    rel = memory.path
    repo.written_now(ui.mem / rel)
    client = ui.client()
    page = client.get(f"/memory/{rel}").text
    assert "Evidence" in page and "psycopg2" in page and "held back" not in page
    repo.commit("asyncpg", {"src/db.py": DB_V2})
    page = client.get(f"/memory/{rel}").text
    assert "held back" in page and "<strong>gone</strong>" in page
