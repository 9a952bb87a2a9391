"""``memdir.session``'s public names exist, are sorted, and nothing public is unlisted."""

from __future__ import annotations

import memdir.session


def test_exports() -> None:
    names = memdir.session.__all__
    assert names == sorted(set(names))
    assert all(hasattr(memdir.session, n) for n in names)
    public = {
        n
        for n, v in vars(memdir.session).items()
        if not n.startswith("_") and not getattr(v, "__name__", "").startswith("memdir.")
    }
    assert public <= set(names)
