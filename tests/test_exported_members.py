"""The public API is exactly ``memdir.__all__``: nothing public is missing, nothing stale."""

from __future__ import annotations

import memdir


def test_all_names_exist() -> None:
    for name in memdir.__all__:
        assert hasattr(memdir, name), name


def test_every_public_attribute_is_listed() -> None:
    public = {
        name
        for name, value in vars(memdir).items()
        if not name.startswith("_") and not getattr(value, "__name__", "").startswith("memdir.")
    }
    assert public <= set(memdir.__all__) | {"annotations"}


def test_all_is_sorted_and_unique() -> None:
    names = [n for n in memdir.__all__ if n != "__version__"]
    assert names == sorted(set(names))
