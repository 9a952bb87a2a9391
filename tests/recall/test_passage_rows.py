"""Per-passage arrays grow and keep what was appended."""

from __future__ import annotations

import numpy as np

from memdir.recall.model_vectors import HASH_DTYPE
from memdir.recall.passage_rows import PassageRows


def test_appends_grow_and_take_keeps_both_spaces() -> None:
    rows = PassageRows(3)
    for i in range(40):
        rows.append(np.full((1, 3), i, np.float32), np.array([bytes([i]) * 16], dtype=HASH_DTYPE))
    assert rows.n == 40 and not rows.have.any()
    rows.set_model(np.array([5]), np.ones((1, 3), np.float32))
    taken = rows.take(np.array([5, 6]))
    assert taken.n == 2
    assert taken.have.tolist() == [True, False]
    assert taken.fast[:, 0].tolist() == [5.0, 6.0]
    assert taken.hashes[0] == bytes([5]) * 16
