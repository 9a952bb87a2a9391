"""applies_when written by a model: stored on success, each failure kept to its memory."""

from __future__ import annotations

from pathlib import Path

from memdir import applies_when
from memdir.errors import ProviderUnavailableError
from memdir.llm.base import Completion
from memdir.llm.scripted import ScriptedProvider
from memdir.recall.applies_model import BY_FIELD, write_with_model
from memdir.recall.embed import MiniLMEmbedder
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
    # the rules' situations first, then the model's new one
    assert written[-1] == "bringing a JavaScript library into a project"
    assert any("dependency" in s for s in written[:-1])
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
