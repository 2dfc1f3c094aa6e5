"""docs/behaviour.md §3.4 / §4.2: frontmatter is read exactly as the reference reads it.

- the block must start at byte 0 (`---`): a BOM or a leading blank line means *no frontmatter*;
- YAML that fails is retried once with the values of simple `key: value` lines that contain
  YAML-special characters (`{}[]*&#!|>%@`` or `": "`) double-quoted; if that fails, no fields.
"""

from __future__ import annotations

import pytest

from memtui.core.memory.frontmatter import parse_frontmatter, quote_problematic_values

CLEAN = "---\nname: Role\ndescription: Backend engineer\ntype: user\n---\n\nThe body.\n"


def test_clean_frontmatter() -> None:
    fm = parse_frontmatter(CLEAN)
    assert fm.present
    assert fm.data == {"name": "Role", "description": "Backend engineer", "type": "user"}
    assert fm.body.lstrip("\n") == "The body.\n"
    assert not fm.repaired
    assert fm.error is None
    assert fm.leading is None
    assert not fm.unclosed


def test_bom_before_fence_means_no_frontmatter() -> None:
    fm = parse_frontmatter("\ufeff" + CLEAN)
    assert not fm.present
    assert fm.data == {}
    assert fm.leading == "bom"
    assert fm.body == "\ufeff" + CLEAN


@pytest.mark.parametrize("prefix", ["\n", "\n\n", "   \n", "\r\n"])
def test_blank_line_before_fence_means_no_frontmatter(prefix: str) -> None:
    fm = parse_frontmatter(prefix + CLEAN)
    assert not fm.present
    assert fm.data == {}
    assert fm.leading == "blank"


def test_leading_space_on_the_fence_line_means_no_frontmatter() -> None:
    fm = parse_frontmatter(" " + CLEAN)
    assert not fm.present
    assert fm.data == {}


def test_unclosed_block() -> None:
    fm = parse_frontmatter("---\nname: Role\ntype: user\n\nBody without a closing fence.\n")
    assert not fm.present
    assert fm.unclosed
    assert fm.data == {}


def test_no_frontmatter_at_all() -> None:
    fm = parse_frontmatter("# Dashboards\n\nLatency board.\n")
    assert not fm.present
    assert fm.leading is None
    assert not fm.unclosed
    assert fm.body == "# Dashboards\n\nLatency board.\n"


def test_empty_block_is_present_with_no_fields() -> None:
    fm = parse_frontmatter("---\n---\nbody\n")
    assert fm.present
    assert fm.data == {}
    assert fm.error is None


def test_crlf_frontmatter_parses() -> None:
    fm = parse_frontmatter(CLEAN.replace("\n", "\r\n"))
    assert fm.present
    assert fm.data == {"name": "Role", "description": "Backend engineer", "type": "user"}


def test_colon_space_in_value_is_repaired_by_the_quoting_retry() -> None:
    fm = parse_frontmatter("---\nname: Freeze\ndescription: a: b\ntype: project\n---\nbody\n")
    assert fm.present
    assert fm.repaired
    assert fm.error is None
    assert fm.data == {"name": "Freeze", "description": "a: b", "type": "project"}


def test_flow_sequence_start_in_value_is_repaired() -> None:
    # `[draft] notes` is a flow sequence followed by junk: invalid; quoted on retry.
    fm = parse_frontmatter("---\nname: [draft] notes\ntype: user\n---\n")
    assert fm.repaired
    assert fm.data["name"] == "[draft] notes"


def test_retry_escapes_quotes_and_backslashes() -> None:
    fm = parse_frontmatter('---\ndescription: say "hi": now \\d\n---\n')
    assert fm.repaired
    assert fm.data["description"] == 'say "hi": now \\d'


def test_valid_yaml_is_not_marked_repaired() -> None:
    fm = parse_frontmatter('---\ndescription: "a: b"\n---\n')
    assert not fm.repaired
    assert fm.data == {"description": "a: b"}


def test_tab_indented_list_fails_both_attempts() -> None:
    fm = parse_frontmatter("---\npaths:\n\t- src/**\n\t- lib/**\n---\nbody\n")
    assert fm.present
    assert not fm.repaired
    assert fm.error is not None
    assert fm.data == {}


def test_indented_colon_value_is_not_retried() -> None:
    # only top-level simple `key: value` lines are quoted; a nested one stays broken.
    fm = parse_frontmatter("---\nmetadata:\n  note: a: b\n---\n")
    assert fm.error is not None
    assert fm.data == {}


def test_yaml_that_is_not_a_mapping() -> None:
    fm = parse_frontmatter("---\n- a\n- b\n---\nbody\n")
    assert fm.present
    assert fm.not_mapping
    assert fm.data == {}


def test_nested_metadata_is_kept_as_a_mapping() -> None:
    fm = parse_frontmatter("---\nname: x\nmetadata:\n  type: feedback\n---\n")
    assert fm.data == {"name": "x", "metadata": {"type": "feedback"}}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("description: a: b", 'description: "a: b"'),
        ("name: @handle", 'name: "@handle"'),
        ("name: use {braces}", 'name: "use {braces}"'),
        ("name: plain words", "name: plain words"),
        ('name: "already: quoted"', 'name: "already: quoted"'),
        ("name: 'already: quoted'", "name: 'already: quoted'"),
        ("  nested: a: b", "  nested: a: b"),
        ("- item: a: b", "- item: a: b"),
        ('d: x "y": z', 'd: "x \\"y\\": z"'),
    ],
)
def test_quote_problematic_values_line_by_line(line: str, expected: str) -> None:
    assert quote_problematic_values(line) == expected


def test_a_control_character_in_the_frontmatter_is_named_with_its_place() -> None:
    # "name: a" is 7 characters: the escape is the 8th of the frontmatter
    fm = parse_frontmatter("---\nname: a\x1bb\ndescription: d\n---\nbody\n")
    assert fm.error == "control characters are not allowed: U+001B at character 8 of the frontmatter"
