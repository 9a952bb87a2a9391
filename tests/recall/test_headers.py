"""HeaderTracker and the header cache it shares with the store's scan."""

from __future__ import annotations

from pathlib import Path

from memdir.consolidate.forget import retire
from memdir.recall.headers import HeaderTracker
from memdir.store import MemoryStore
from memdir.validity import current_only


def test_validity_survives_the_shared_header_cache(tmp_path: Path) -> None:
    """Regression: headers taken from the cache (and the cache the tracker wrote) lost their
    validity keys, so a retired memory looked current to recall and to every later scan."""
    cache = tmp_path / "cache" / "headers.json"
    store = MemoryStore(tmp_path / "mem", header_cache=cache)
    store.create("Old", "an old fact", "user", "x\n", rel="old.md")
    store.create("New", "a new fact", "user", "y\n", rel="new.md")
    retire(store, "old.md", reason="no longer true")
    assert [h.filename for h in current_only(store.scan().headers)] == ["new.md"]  # cache written
    warm = HeaderTracker(store.root, cache_path=cache).headers()  # headers from the cache
    assert [h.filename for h in current_only(warm)] == ["new.md"]
    cache.unlink()
    HeaderTracker(store.root, cache_path=cache).headers()  # the tracker writes the cache
    assert [h.filename for h in current_only(store.scan().headers)] == ["new.md"]


def test_repair_notes_survive_the_shared_header_cache(tmp_path: Path) -> None:
    """Regression: the tracker cached headers without the scan's repair notes, so after a
    warm start doctor no longer reported a header that needed quoting."""
    cache = tmp_path / "cache" / "headers.json"
    store = MemoryStore(tmp_path / "mem", header_cache=cache)
    store.create("Fine", "a fine memory", "user", "x\n", rel="fine.md")
    (store.root / "broken.md").write_text("---\nname: B\ndescription: a: b: c\n---\nbody\n")
    HeaderTracker(store.root, cache_path=cache).headers()  # the tracker fills the cache first
    kinds = [n.kind for n in store.scan().notes]
    assert kinds == ["frontmatter-quoted"]
