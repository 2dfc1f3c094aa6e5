"""docs/behaviour.md §2 "Slug": every character outside [A-Za-z0-9] becomes `-`, counted in UTF-16 code
units; over 200 units → first 200 + `-` + base-36 of abs(32-bit djb2(full path)).

Expected hashes were computed with node (v20) running the reference algorithm, then hardcoded:

    function djb2(s){let h=0;for(let i=0;i<s.length;i++){h=((h<<5)-h+s.charCodeAt(i))|0}return h}
    function slug(p){const s=p.replace(/[^a-zA-Z0-9]/g,'-');
      if(s.length<=200) return s; return s.slice(0,200)+'-'+Math.abs(djb2(p)).toString(36)}
"""

from __future__ import annotations

import pytest

from memtui.core.places.slug import djb2_hash, slugify, to_base36


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/tmp/test-project", "-tmp-test-project"),
        ("/tmp/test/project", "-tmp-test-project"),
        ("/a/b-c", "-a-b-c"),
        ("/a/b/c", "-a-b-c"),
        ("/Users/Alice/My Project_v2.0", "-Users-Alice-My-Project-v2-0"),
        ("", ""),
    ],
)
def test_every_non_alphanumeric_character_becomes_a_dash(path: str, expected: str) -> None:
    assert slugify(path) == expected


def test_slugs_are_lossy_dash_and_slash_collide() -> None:
    assert slugify("/tmp/test-project") == slugify("/tmp/test/project")


def test_emoji_is_two_utf16_units_so_two_dashes() -> None:
    assert slugify("/w/😀") == "-w---"


def test_cjk_character_is_one_utf16_unit_so_one_dash() -> None:
    assert slugify("/w/笔记") == "-w---"
    assert slugify("/w/笔") == "-w--"


def test_accented_letters_are_not_ascii_alphanumerics() -> None:
    # é (U+00E9) is one UTF-16 unit outside [A-Za-z0-9]
    assert slugify("/café") == "-caf-"


def test_exactly_200_units_is_not_hashed() -> None:
    path = "/" + "x" * 199
    assert slugify(path) == "-" + "x" * 199


def test_201_units_gets_the_djb2_suffix() -> None:
    # node: djb2('/' + 'x'.repeat(200)) = -786901713 → abs → base 36 'd0i18x'
    path = "/" + "x" * 200
    assert slugify(path) == "-" + "x" * 199 + "-d0i18x"


def test_250_char_path_is_cut_to_200_plus_hash() -> None:
    # node: djb2('/' + 'a'.repeat(249)) = -1969715310 → 'wkpu26'
    path = "/" + "a" * 249
    result = slugify(path)
    assert result == "-" + "a" * 199 + "-wkpu26"
    assert len(result) == 207


def test_200_code_points_but_201_utf16_units_is_hashed() -> None:
    # 200 code points, 201 UTF-16 units (one emoji). node: djb2 = -76106067 → '19b7tf'
    path = "/" + "d" * 197 + "😀" + "e"
    assert len(path) == 200
    assert slugify(path) == "-" + "d" * 197 + "--" + "-19b7tf"


def test_cut_falls_between_the_two_dashes_of_an_emoji() -> None:
    # sanitized: '-' + 198 b + '--' + 10 c = 211 units; the 200-unit cut keeps one dash of the
    # emoji. node: djb2 = 925479602 (positive) → 'fb08mq'
    path = "/" + "b" * 198 + "😀" + "c" * 10
    assert slugify(path) == "-" + "b" * 198 + "-" + "-fb08mq"


def test_long_cjk_path() -> None:
    # node: '/home/用户/' + '项目'.repeat(100): length 209, djb2 = -1817933901 → 'u2cmrx'
    path = "/home/用户/" + "项目" * 100
    assert slugify(path) == "-home----" + "-" * 191 + "-u2cmrx"


def test_realistic_deep_path() -> None:
    # node: djb2 = -1412969354 → 'nd8u4q'
    path = "/home/alice/work/" + "very-long-directory-name/" * 10 + "src"
    assert len(path) == 270
    assert slugify(path) == path.replace("/", "-")[:200] + "-nd8u4q"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 97),
        ("ab", 97 * 31 + 98),
        # node-computed values (see module docstring)
        ("/" + "a" * 249, -1969715310),
        ("/" + "b" * 198 + "😀" + "c" * 10, 925479602),
        ("/" + "x" * 199, -995215255),
    ],
)
def test_djb2_matches_javascript_signed_32_bit(text: str, expected: int) -> None:
    assert djb2_hash(text) == expected


@pytest.mark.parametrize(("n", "expected"), [(0, "0"), (35, "z"), (36, "10"), (1969715310, "wkpu26")])
def test_base36_lower_case(n: int, expected: str) -> None:
    assert to_base36(n) == expected
