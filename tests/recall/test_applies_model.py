"""applies_when written by a model: stored on success, each failure kept to its memory."""

from __future__ import annotations

import io
from pathlib import Path

from memdir import applies_when
from memdir.adapters.mcp_tools import MemoryTools
from memdir.cli.main import main
from memdir.errors import ProviderUnavailableError
from memdir.llm.base import Completion
from memdir.llm.scripted import ScriptedProvider
from memdir.recall.applies_model import BY_FIELD, write_with_model
from memdir.recall.embed import MiniLMEmbedder
from memdir.recall.keyword import KeywordSelector
from memdir.recall.local import LocalSelector
from memdir.store import MemoryStore


def _store(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "mem")
    store.create("Admin UI yarn", "The admin UI uses yarn workspaces", "feedback", "yarn add")
    store.create("Release manager", "Ask Marta before removing refs", "feedback", "")
    store.create("Mine", "A note", "project", "")
    applies_when.stamp(store, "mine.md", ["only when I say so"], replace=True)
    return store


async def test_model_lists_are_stored_failures_stay_per_memory(tmp_path: Path) -> None:
    store = _store(tmp_path)
    provider = ScriptedProvider(
        [
            Completion.from_json(
                {"applies_when": ["bringing a JavaScript library into a project"]}
            ),
            ProviderUnavailableError("down"),
        ]
    )
    rels = ["admin_ui_yarn.md", "release_manager.md", "mine.md", "gone.md"]
    report = await write_with_model(store, provider, rels)
    written = report.written["admin_ui_yarn.md"]
    assert set(report.written) == {"admin_ui_yarn.md"}
    # the model's own list is stored; recall reads the rules' situations before it
    assert written == ["bringing a JavaScript library into a project"]
    assert set(report.skipped) == {"release_manager.md", "mine.md", "gone.md"}
    assert "model failed" in report.skipped["release_manager.md"]
    assert store.read("admin_ui_yarn.md").extra[BY_FIELD] == "model"
    assert applies_when.stored(store.read("mine.md")) == ["only when I say so"]
    assert provider.calls == 2  # a person's list is not sent to the model
    assert "admin UI uses yarn" in provider.requests[0].messages[0].text


async def test_a_model_list_makes_a_no_shared_word_request_surface(tmp_path: Path) -> None:
    store = _store(tmp_path)
    # No class of task in the request (memdir.recall.intents), no word of the rules' situations:
    # only the model's list can tell recall that the yarn memory governs it.
    query = "Is lodash fine for the back-office console?"
    selector = LocalSelector(store.root, tmp_path / "cache", embedder=MiniLMEmbedder())
    assert "admin_ui_yarn.md" not in [s.filename for s in selector.select_sync(query, None)]
    provider = ScriptedProvider.always(
        Completion.from_json({"applies_when": ["using lodash or another library in the console"]})
    )
    await write_with_model(store, provider, ["admin_ui_yarn.md"])
    assert "admin_ui_yarn.md" in [s.filename for s in selector.select_sync(query, None)]


async def test_the_saving_agents_list_and_a_persons_are_kept_a_models_is_refreshed(
    tmp_path: Path,
) -> None:
    """The host agent's list (memory_save with applies_when) was written by a capable model that
    saw the conversation, and a person's (``memdir add --applies-when``) is theirs: a background
    model run leaves both. Its own earlier list (marked ``model``) it refreshes."""
    store = MemoryStore(tmp_path / "mem")
    tools = MemoryTools(store, KeywordSelector())
    tools.save(
        "Strings live in Lokalise",
        "UI copy is managed in Lokalise",
        "feedback",
        "Never hand-edit the locale files.",
        applies_when=["renaming a menu item"],
    )
    agents = "strings_live_in_lokalise.md"
    assert store.read(agents).extra[BY_FIELD] == applies_when.BY_AGENT
    mine = ["only when I say so"]
    add = ["add", "Mine", "-d", "A note", "-t", "project", "-b", "x", "--applies-when", mine[0]]
    code = main(
        ["--dir", str(store.root), *add],
        env={"HOME": str(tmp_path / "home")},
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    assert code == 0
    store.create("Theme", "The docs theme is Furo", "project", "")
    provider = ScriptedProvider.always(
        Completion.from_json({"applies_when": ["changing the wording of a button"]})
    )
    first = await write_with_model(store, provider, [agents, "mine.md", "theme.md"])
    kept = "a person or the saving agent wrote its applies_when"
    assert first.skipped == {agents: kept, "mine.md": kept}
    assert applies_when.stored(store.read(agents)) == ["renaming a menu item"]
    assert applies_when.stored(store.read("mine.md")) == mine
    assert applies_when.stored(store.read("theme.md")) == ["changing the wording of a button"]
    provider = ScriptedProvider.always(Completion.from_json({"applies_when": ["picking fonts"]}))
    again = await write_with_model(store, provider, ["theme.md"])
    assert again.written == {"theme.md": ["picking fonts"]}  # its own list: refreshed
    assert provider.calls == 1
