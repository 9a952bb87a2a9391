"""Why it surfaced, Sessions, Dream, Health and live updates through the app."""

from __future__ import annotations

import re

from memdir.ui.live import fingerprint
from tests.consolidate.conftest import tree
from tests.consolidate.test_plan import messy
from tests.ui.conftest import Ui, replay_hooks


def verdict(html: str, rel: str) -> str | None:
    """The verdict cell of ``rel``'s row in the explain table (None: not a candidate)."""
    row = re.search(rf'href="/memory/{re.escape(rel)}">.*?</tr>', html, re.S)
    return row.group(0) if row else None


def test_explain_shows_scores_and_retired_memories_leave_recall(ui: Ui) -> None:
    ui.store.create("Deploy day", "deploys go out on Tuesdays", "project", "Deploys: Tuesdays.\n")
    ui.store.create("Editor", "user edits in neovim", "user", "nvim.\n")
    client = ui.client()
    page = client.get("/recall?q=which+day+do+deploys+go+out").text
    row = verdict(page, "deploy_day.md")
    assert row is not None and "injected" in row
    assert re.search(r"<td>0\.\d{3}</td>", row)  # lexical / semantic scores shown
    ui.post(client, "/retire/deploy_day.md", {"reason": "no fixed deploy day any more"})
    after = client.get("/recall?q=which+day+do+deploys+go+out").text
    gone = verdict(after, "deploy_day.md")
    assert gone is None or "held back" in gone
    ui.store.create("Release train", "release deploys go out on Thursdays", "project", "Thu.\n")
    fresh = client.get("/recall?q=which+day+do+deploys+go+out").text  # the warm index follows
    assert verdict(fresh, "release_train.md") is not None


def test_recall_page_without_a_query_explains_itself(ui: Ui) -> None:
    assert "Type a prompt" in ui.client().get("/recall").text


def test_sessions_show_what_the_hooks_injected(ui: Ui) -> None:
    ui.store.create("Deploy day", "deploys go out on Tuesdays", "project", "Deploys: Tuesdays.\n")
    replay_hooks(
        ui,
        "s-1234567890",
        ("session-start", {"source": "startup"}),
        ("user-prompt-submit", {"prompt": "which day do deploys go out?"}),
        ("user-prompt-submit", {"prompt": "ok"}),
    )
    client = ui.client()
    listed = client.get("/sessions").text
    assert "s-1234567890"[:12] in listed and "which day do deploys go out?" in listed
    timeline = client.get("/sessions/s-1234567890").text
    assert 'href="/memory/deploy_day.md">Deploy day</a> — deploys go out on Tuesdays' in timeline
    assert "Injected 1 memory" in timeline
    assert "single-word prompt" in timeline
    assert "/recall?q=which%20day%20do%20deploys%20go%20out%3F" in timeline


def test_sessions_empty_state(ui: Ui) -> None:
    page = ui.client().get("/sessions").text
    assert "No hook activity yet" in page
    assert ui.client().get("/sessions/nope").status_code == 404


def test_dream_plan_apply_undo_restores_the_bytes(ui: Ui) -> None:
    messy(ui.mem)
    before = tree(ui.mem)
    client = ui.client()
    planned = client.get("/dream?plan=1").text
    assert 'class="d-del"' in planned and 'class="d-add"' in planned
    assert tree(ui.mem) == before  # a dry run writes nothing
    applied = ui.post(client, "/dream/apply", {})
    assert "flash ok" in applied
    assert tree(ui.mem) != before
    snap = re.search(r'name="id" value="([^"]+)"', applied)
    assert snap is not None
    undone = ui.post(client, "/dream/undo", {"id": snap.group(1)})
    assert "undid dream" in undone
    assert tree(ui.mem) == before


def test_dream_with_nothing_to_do(ui: Ui) -> None:
    ui.store.create("Editor", "user edits in neovim", "user", "nvim.\n")
    page = ui.client().get("/dream?plan=1").text
    assert "no changes planned" in page and "No dream has run" in page


def test_health_lists_doctor_problems_and_fixes_a_header(ui: Ui) -> None:
    ui.store.create("Editor", "user edits in neovim", "user", "nvim.\n")
    broken = ui.mem / "broken.md"
    broken.write_text("---\nname: Broken\ndescription: a: b: c\ntype: user\n---\nbody\n")
    client = ui.client()
    page = client.get("/health").text
    assert "frontmatter-quoted" in page and "broken.md" in page
    assert "Fix everything doctor can fix" in page
    fixed = ui.post(client, "/health/fix", {"path": "broken.md"})
    assert "quoted the header values" in fixed
    assert 'description: "a: b: c"' in broken.read_text()
    assert "frontmatter-quoted" not in client.get("/health").text


def test_health_shows_team_dir_state(ui: Ui) -> None:
    (ui.mem / "team").mkdir()
    ui.store.create("Style", "team code style", "project", "black.\n", rel="team/style.md")
    page = ui.client().get("/health").text
    assert "Team memory" in page and "not configured" in page


def test_live_fingerprint_changes_with_files_not_with_locks(ui: Ui) -> None:
    ui.store.create("Editor", "user edits in neovim", "user", "nvim.\n")
    first = fingerprint(ui.ctx)
    with ui.store.lock():
        pass
    assert fingerprint(ui.ctx) == first  # taking the lock is not a change to show
    (ui.mem / "editor.md").write_text((ui.mem / "editor.md").read_text() + "more\n")
    second = fingerprint(ui.ctx)
    assert second != first
    replay_hooks(ui, "s-live", ("user-prompt-submit", {"prompt": "what editor do I use"}))
    assert fingerprint(ui.ctx) != second  # the hook log is watched too
    version = ui.client().get("/api/version").json()["version"]
    assert version == fingerprint(ui.ctx)


def test_memdir_ui_serves_a_real_process(ui: Ui) -> None:
    """The command itself: prints the token URL, refuses without it, serves with it."""
    import httpx

    from tests.ui.browser import running_ui

    with running_ui(ui) as url:
        base = url.split("/?")[0]
        assert httpx.get(base + "/memories").status_code == 403
        with httpx.Client(follow_redirects=True) as client:
            assert client.get(url).status_code == 200
            assert client.get(base + "/memories").status_code == 200


def test_health_offers_the_index_rebuild_for_drift_and_no_fix_button_without_a_fix(ui: Ui) -> None:
    ui.store.create("Editor", "user edits in neovim", "user", "nvim.\n")
    index = ui.mem / "MEMORY.md"
    index.write_text(index.read_text() + "- [Gone](gone.md) — deleted by hand\n")
    client = ui.client()
    page = client.get("/health").text
    assert "index-dead_links</span> × 1" in page
    assert "Fix everything doctor can fix" not in page  # doctor --fix has no fix for drift
    fixed = ui.post(client, "/index/rebuild", {})
    assert "rebuilt MEMORY.md" in fixed and "gone.md" not in index.read_text()
    assert "No problems found" in client.get("/health").text


def test_index_lines_past_the_prompt_limit_are_marked(ui: Ui) -> None:
    lines = "".join(f"- [Note {i}](n{i}.md) — note {i}\n" for i in range(205))
    (ui.mem / "MEMORY.md").write_text(lines)
    page = ui.client().get("/index").text
    assert page.count("the model never sees it") == 5
    assert "Over the prompt limit: 205 lines" in page
