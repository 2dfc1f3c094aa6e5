"""Path safety for team keys and agent-chosen writes (docs/behaviour.md §9): the string layer, containment
on a separator boundary, and the realpath layer (symlinks out, in, dangling, looping).

Expected codes are worked out from docs/behaviour.md §9 by hand, rule by rule, in the spec's order."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from memtui.core.writes.safepath import UnsafePathError, validate_inside, validate_team_key


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``root/mem/team`` with symlinks of every kind inside it, plus siblings outside it.

    root/outside/secret.txt       a dir outside the team dir
    root/mem/team-evil/           a sibling whose name starts with "team"
    root/mem/team/notes/a.md
    team/to-outside -> ../../outside         (dir link out of the tree)
    team/file-out   -> ../../outside/secret.txt
    team/up         -> ..                    (the memory dir: outside team)
    team/to-inside  -> notes                 (stays inside)
    team/file-in.md -> notes/a.md            (stays inside)
    team/dangling   -> ../../nowhere
    team/loop       -> loop;  team/loop-a -> loop-b -> loop-a
    team/self       -> .
    Returns ``root/mem/team``.
    """
    root = tmp_path.resolve()
    (root / "outside").mkdir()
    (root / "outside" / "secret.txt").write_text("keys")
    mem = root / "mem"
    (mem / "team-evil").mkdir(parents=True)
    team = mem / "team"
    (team / "notes").mkdir(parents=True)
    (team / "notes" / "a.md").write_text("a")
    links = {
        "to-outside": "../../outside",
        "file-out": "../../outside/secret.txt",
        "up": "..",
        "to-inside": "notes",
        "file-in.md": "notes/a.md",
        "dangling": "../../nowhere",
        "loop": "loop",
        "loop-a": "loop-b",
        "loop-b": "loop-a",
        "self": ".",
    }
    for name, target in links.items():
        os.symlink(target, team / name)
    return team


# --- accepted keys -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected_rel"),
    [
        ("笔记.md", "笔记.md"),  # legitimate Unicode (docs/behaviour.md §9)
        ("notes/2026-03.md", "notes/2026-03.md"),
        ("a..b.md", "a..b.md"),  # '..' inside a name is not traversal: no rule fires
        ("notes/a.md", "notes/a.md"),  # an existing file
        ("to-inside/new.md", "notes/new.md"),  # a link that stays inside: the real path comes back
        ("file-in.md", "notes/a.md"),
        ("%zz.md", "%zz.md"),  # bad escape: unquote leaves it, so the key is unchanged
        ("100%.md", "100%.md"),
        ("%252e%252e%252f", "%252e%252e%252f"),  # decoded ONCE -> '%2e%2e%2f': no '..' or '/'
        ("ｆｏｏ.md", "ｆｏｏ.md"),  # NFKC changes it to 'foo.md', but nothing forbidden appears
        ("notes/../b.md", "b.md"),  # lexical '..' that stays inside
        ("to-outside/../b.md", "b.md"),  # lexical normalisation first: team/b.md, not outside/../b.md
        ("new/deep/x.md", "new/deep/x.md"),  # missing tail re-joined
        ("x/./y.md", "x/y.md"),
    ],
)
def test_accepted_keys_land_inside(tree: Path, key: str, expected_rel: str) -> None:
    assert validate_team_key(key, tree) == tree / expected_rel


# --- rejected keys -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "code"),
    [
        # NUL: first rule
        ("a\0b.md", "nul-byte"),
        ("notes/\0", "nul-byte"),
        ("%00\0", "nul-byte"),
        # URL-decoded once to something different containing '..' or '/'
        ("%2e%2e%2fsecret", "url-encoded-traversal"),
        ("%2E%2E%2Fsecret", "url-encoded-traversal"),
        ("..%2fsecret", "url-encoded-traversal"),  # -> '../secret'
        ("%2e%2e/secret", "url-encoded-traversal"),
        ("%2e%2e%5csecret", "url-encoded-traversal"),  # -> '..\\secret' contains '..'
        ("notes%2fa.md", "url-encoded-traversal"),  # -> 'notes/a.md': different and has '/'
        ("%2fetc%2fpasswd", "url-encoded-traversal"),
        # NFKC-normalised to something different containing '..', '/', '\' or NUL
        ("．．／secret", "unicode-traversal"),  # fullwidth full stops and solidus -> '../secret'
        ("．．/secret", "unicode-traversal"),
        ("notes／a.md", "unicode-traversal"),  # -> 'notes/a.md'
        ("＼x.md", "unicode-traversal"),  # fullwidth reverse solidus -> '\x.md'
        ("a‥b.md", "unicode-traversal"),  # U+2025 TWO DOT LEADER -> 'a..b.md': different, has '..'
        # backslash (after the two decoding rules: a plain one changes neither)
        ("..\\secret", "backslash"),
        ("notes\\a.md", "backslash"),
        # absolute
        ("/etc/passwd", "absolute-path"),
        ("/", "absolute-path"),
        # containment, lexical
        ("../x.md", "outside-dir"),
        ("notes/../../x.md", "outside-dir"),
        ("../team-evil/x.md", "outside-dir"),  # 'team-evil' starts with 'team' but is not inside it
        ("../../outside/secret.txt", "outside-dir"),
        ("", "dir-itself"),
        (".", "dir-itself"),
        ("notes/..", "dir-itself"),
        # containment, realpath
        ("to-outside/x.md", "symlink-escape"),
        ("file-out", "symlink-escape"),  # team/sprint.md -> ~/.ssh/authorized_keys (chapter 17.9)
        ("up/x.md", "symlink-escape"),
        ("self", "dir-itself"),
        ("dangling", "dangling-symlink"),
        ("dangling/x.md", "dangling-symlink"),
        ("loop", "symlink-loop"),
        ("loop/x.md", "symlink-loop"),
        ("loop-a/x.md", "symlink-loop"),
    ],
)
def test_rejected_keys(tree: Path, key: str, code: str) -> None:
    with pytest.raises(UnsafePathError) as caught:
        validate_team_key(key, tree)
    assert caught.value.code == code
    assert caught.value.key == key
    assert isinstance(caught.value, ValueError)
    assert caught.value.reason and caught.value.reason[0].islower()  # a sentence fragment, not a code


def test_a_file_used_as_a_folder_is_refused(tree: Path) -> None:
    with pytest.raises(UnsafePathError) as caught:
        validate_team_key("notes/a.md/b.md", tree)
    assert caught.value.code == "unresolvable"


def test_the_reason_names_the_link(tree: Path) -> None:
    with pytest.raises(UnsafePathError) as caught:
        validate_team_key("dangling", tree)
    assert str(tree / "dangling") in caught.value.reason and "../../nowhere" in caught.value.reason


def test_team_dir_not_created_yet(tmp_path: Path) -> None:
    mem = tmp_path.resolve() / "mem"
    mem.mkdir()
    assert validate_team_key("a.md", mem / "team") == mem / "team" / "a.md"
    with pytest.raises(UnsafePathError):
        validate_team_key("../a.md", mem / "team")


def test_team_dir_that_is_itself_a_symlink(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "real-team").mkdir()
    (root / "mem").mkdir()
    os.symlink(root / "real-team", root / "mem" / "team")
    # the user's own setup: keys land in the link's target, which is the team dir for real
    assert validate_team_key("a.md", root / "mem" / "team") == root / "real-team" / "a.md"


def test_dangling_team_dir_refuses_every_key(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "mem").mkdir()
    os.symlink(root / "gone", root / "mem" / "team")
    with pytest.raises(UnsafePathError) as caught:
        validate_team_key("a.md", root / "mem" / "team")
    assert caught.value.code == "dangling-symlink"


# --- validate_inside -----------------------------------------------------------------------


def test_validate_inside(tree: Path) -> None:
    mem = tree.parent
    assert validate_inside(mem / "notes.md", mem) == mem / "notes.md"
    assert validate_inside("team/notes/a.md", mem) == mem / "team" / "notes" / "a.md"
    assert validate_inside(str(tree / "to-inside" / "n.md"), mem) == tree / "notes" / "n.md"
    # no key rules for paths: a literal '%2e' or backslash is just a character in a name
    assert validate_inside(mem / "%2e%2e%2f", mem) == mem / "%2e%2e%2f"
    for path, code in [
        (mem.parent / "outside" / "x.md", "outside-dir"),
        (mem / ".." / "x.md", "outside-dir"),
        (mem.parent / "memory-evil" / "x.md", "outside-dir"),
        (mem, "dir-itself"),
        (tree / "to-outside" / "x.md", "symlink-escape"),
        (tree / "dangling", "dangling-symlink"),
        (tree / "loop", "symlink-loop"),
        (str(mem / "a\0.md"), "nul-byte"),
    ]:
        with pytest.raises(UnsafePathError) as caught:
            validate_inside(path, mem)
        assert caught.value.code == code, path
    assert validate_inside(tree / "file-in.md", tree) == tree / "notes" / "a.md"


# --- the property: no accepted key ever lands outside --------------------------------------

_PIECES = [
    ".", "..", "/", "\\", "%", "2e", "2f", "2E", "5c", "%2e", "%2f", "%2E%2E", "%5c", "%00", "%25",
    "．", "．．", "／", "＼", "\0", "‥", "a", "b.md", "笔记", "é", "ｆ", "notes", "a.md", "team",
    "team-evil", "to-outside", "file-out", "up", "to-inside", "file-in.md", "dangling", "loop",
    "loop-a", "self", "outside", "secret.txt", "-",
]  # fmt: skip

_SEGMENTS = [
    ".", "..", "notes", "a.md", "x.md", "to-outside", "file-out", "up", "to-inside", "file-in.md",
    "dangling", "loop", "loop-a", "self", "team", "team-evil", "outside", "secret.txt", "笔记.md", "a..b.md",
]  # fmt: skip

keys = st.one_of(
    st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=6).map("/".join),  # walks through the links
    st.lists(st.sampled_from(_PIECES), max_size=10).map("".join),
    st.text(alphabet=st.sampled_from("./\\%2efE5c0．／＼\0‥a笔é-"), max_size=16),
)


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root and path != root


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=keys)
def test_no_accepted_key_resolves_outside(tree: Path, key: str) -> None:
    try:
        result = validate_team_key(key, tree)
    except UnsafePathError as exc:
        assert exc.key == key and exc.reason
        event(f"rejected: {exc.code}")
        return
    event("accepted via a link" if os.path.realpath(result) != os.path.normpath(os.path.join(tree, key)) else "accepted")
    real_team = os.path.realpath(tree)
    # where the kernel really goes when the returned path is opened for writing
    assert result.is_absolute()
    assert _inside(str(result), real_team)
    assert _inside(os.path.realpath(result), real_team)
    # and the string layer held: none of the forbidden shapes got through
    assert "\0" not in key and "\\" not in key and not key.startswith("/")
    decoded = unquote(key)
    assert decoded == key or (".." not in decoded and "/" not in decoded)
    folded = unicodedata.normalize("NFKC", key)
    assert folded == key or not any(bad in folded for bad in ("..", "/", "\\", "\0"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=keys)
def test_no_accepted_path_resolves_outside(tree: Path, key: str) -> None:
    mem = tree.parent
    try:
        result = validate_inside(os.path.join(str(tree), key), tree)
    except UnsafePathError:
        return
    assert _inside(os.path.realpath(result), os.path.realpath(tree))
    assert not _inside(os.path.realpath(result), os.path.realpath(mem / "team-evil"))
