"""Strict YAML reading: positions, duplicate keys, refused tags, size and encoding limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutations import document
from mutations.document import DocumentError, read_document


def read(tmp_path: Path, data: str | bytes) -> document.Node | None:
    path = tmp_path / "f.yaml"
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return read_document(path, "f.yaml")


def errors(tmp_path: Path, data: str | bytes) -> str:
    with pytest.raises(DocumentError) as caught:
        read(tmp_path, data)
    return str(caught.value)


def test_values_carry_their_line_and_column_and_scalars_follow_safe_load(tmp_path: Path) -> None:
    node = read(tmp_path, "a:\n  - 1\n  - yes\n  - '1'\n  - null\n")
    assert node is not None and node.key_line_col("a") == (1, 1)
    items = node.value["a"].value
    assert [i.value for i in items] == [1, True, "1", None]
    assert (items[1].line, items[1].column) == (3, 5)


def test_duplicate_keys_are_refused_naming_both_positions(tmp_path: Path) -> None:
    assert "f.yaml:3:1: duplicate key 'a' (first at line 1, column 1)" in errors(tmp_path, "a: 1\nb: 2\na: 3\n")


def test_an_object_tag_is_refused_and_never_constructed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    message = errors(tmp_path, f"a: !!python/object/apply:os.system ['touch {marker}']\n")
    assert "f.yaml:1:4: YAML tag '!!python/object/apply:os.system' is refused" in message
    assert not marker.exists()


def test_non_utf8_bytes_are_refused_with_their_position(tmp_path: Path) -> None:
    assert "f.yaml:2:4: byte 0xff is not UTF-8" in errors(tmp_path, b"a: 1\nb: \xff\n")


def test_text_that_is_not_yaml_is_refused_with_its_position(tmp_path: Path) -> None:
    assert errors(tmp_path, "a: [1, 2\nb: 3\n").startswith("f.yaml:2:")


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(document, "MAX_BYTES", 10)
    assert "over the 10-byte limit" in errors(tmp_path, "a: 12345678901\n")


def test_an_alias_bomb_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(document, "MAX_NODES", 5_000)
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 7)]
    assert "expands to too many values" in errors(tmp_path, "\n".join(lines) + "\n")


def test_an_empty_document_reads_as_none(tmp_path: Path) -> None:
    assert read(tmp_path, "# only a comment\n") is None
