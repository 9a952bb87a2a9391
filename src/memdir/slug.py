"""File stems from memory names: any script, never a generic name, never a silent collision.

Invariants:
- A slug keeps the Unicode letters, digits and combining marks of the name (NFC, lower case), so
  ``数据库测试规范`` and ``Déploiement`` name their own files; every other run of characters
  becomes one ``_``. A character whose compatibility form (NFKC) is not a letter or digit
  (``⒈`` → ``1.``) is treated as punctuation, so no slug can fold into a path separator or ``..``.
- A name with nothing to keep (``"!!!"``, emoji) gets ``memory_<hash>``, and a name cut to the
  length cap gets ``<prefix>_<hash>``: the hash is of the whole NFC name, so two different names
  never share a file because of what the slug dropped.
- Slugs stay under :data:`MAX_SLUG_BYTES` of UTF-8, well inside the 255-byte file-name limit
  with room for ``.md`` and a temp-file suffix.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_SLUG_BYTES = 120
_HASH_CHARS = 8
_KEPT_CATEGORIES = ("L", "N", "M")


def _kept(char: str) -> bool:
    if not unicodedata.category(char).startswith(_KEPT_CATEGORIES):
        return False
    folded = unicodedata.normalize("NFKC", char)
    return all(unicodedata.category(c).startswith(_KEPT_CATEGORIES) for c in folded)


def _digest(name: str) -> str:
    return hashlib.blake2b(name.encode("utf-8"), digest_size=8).hexdigest()[:_HASH_CHARS]


_ASCII_RUN = re.compile(r"[^a-z0-9]+")


def slugify(name: str) -> str:
    """A file stem for a memory called ``name`` (see the module invariants)."""
    text = unicodedata.normalize("NFC", name).lower()
    if text.isascii():  # ASCII letters and digits are exactly what is kept: one regex pass
        slug = _ASCII_RUN.sub("_", text).strip("_")
    else:
        pieces: list[str] = []
        for char in text:
            if _kept(char):
                pieces.append(char)
            elif pieces and pieces[-1] != "_":
                pieces.append("_")
        slug = "".join(pieces).strip("_")
    if not slug:
        return f"memory_{_digest(unicodedata.normalize('NFC', name))}"
    if len(slug.encode("utf-8")) <= MAX_SLUG_BYTES:
        return slug
    budget = MAX_SLUG_BYTES - _HASH_CHARS - 1
    cut = slug.encode("utf-8")[:budget].decode("utf-8", errors="ignore")
    # A trailing combining mark without the rest of its word reads badly; cut before it.
    while cut and unicodedata.category(cut[-1]).startswith("M"):
        cut = cut[:-1]
    return f"{cut.rstrip('_')}_{_digest(unicodedata.normalize('NFC', name))}"


__all__ = ["MAX_SLUG_BYTES", "slugify"]
