from __future__ import annotations

from memdir.cli.output import cols, table


def test_wide_characters_take_two_columns() -> None:
    assert cols("abc") == 3
    assert cols("数据库") == 6
    assert cols("e\u0301") == 1  # e + combining acute accent


def test_table_aligns_cjk_rows() -> None:
    """Regression: a Chinese file name pushed its row's later columns out of line."""
    rows = [
        {"path": "数据库.md", "type": "feedback"},
        {"path": "deploy_rule.md", "type": "project"},
    ]
    header, *body = table(rows, ["path", "type"]).splitlines()
    kinds = ("feedback", "project")
    starts = {cols(line[: line.index(kind)]) for line, kind in zip(body, kinds, strict=True)}
    assert starts == {cols(header[: header.index("TYPE")])}
