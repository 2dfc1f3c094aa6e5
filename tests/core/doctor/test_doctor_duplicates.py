"""docs/behaviour.md §4.3 duplicates: exact body duplicates; near-duplicates of the same type by
description + body similarity (rapidfuzz token_sort_ratio ≥ 85 after a Jaccard ≥ 0.5 word-set
prefilter); never across types; short bodies not judged."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
from support.doctor import doctor, only, write
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

import memtui.core.doctor.duplicates as dup
from memtui.core.doctor.duplicates import (
    NearTexts,
    near_duplicate_pairs,
    near_text,
    tokens,
)
from memtui.core.memory.memories import parse_memory_bytes


def fb(description: str, body: str, kind: str = "feedback") -> str:
    return f"---\nname: n\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n"


def setup(tmp_path: Path, files: dict[str, str]) -> Path:
    memory_dir = tmp_path / "memory"
    for rel, text in files.items():
        write(memory_dir, rel, text)
    write(memory_dir, "MEMORY.md", "".join(f"- [n]({rel}) — d\n" for rel in files))
    return memory_dir


BODY = "Answer in at most a few sentences unless asked for detail.\n\n**Why:** long recaps were skipped unread.\n\n**How to apply:** drop the closing summary."


def test_exact_duplicates(tmp_path: Path) -> None:
    memory_dir = setup(tmp_path, {"a.md": fb("terse answers", BODY), "b.md": fb("short replies", BODY.replace("\n\n", "\n\n  ")), "c.md": fb("other", "Something else entirely, long enough to count.")})
    report = doctor(memory_dir)
    assert [(f.path, f.data["others"]) for f in only(report, "duplicate")] == [("a.md", ["b.md"]), ("b.md", ["a.md"])]
    assert only(report, "near-duplicate") == []


def test_near_duplicates_same_type_only(tmp_path: Path) -> None:
    reworded = BODY.replace("unless asked for detail", "unless the user asks for detail")
    memory_dir = setup(
        tmp_path,
        {
            "a.md": fb("The user wants terse answers without recap paragraphs", BODY),
            "b.md": fb("The user wants terse answers, no recap paragraphs", reworded),
            "c.md": fb("The user wants terse answers without recap paragraphs", reworded, kind="user"),
        },
    )
    report = doctor(memory_dir)
    near = {(f.path, tuple(f.data["others"])) for f in only(report, "near-duplicate")}
    assert near == {("a.md", ("b.md",)), ("b.md", ("a.md",))}
    [a] = [f for f in only(report, "near-duplicate") if f.path == "a.md"]
    assert a.data["scores"][0] >= 85 and a.severity == "info" and a.fix is None


def test_different_memories_are_not_near_duplicates(tmp_path: Path) -> None:
    memory_dir = setup(
        tmp_path,
        {
            "a.md": fb("Squash merges", "Squash every PR into one commit.\n\n**Why:** bisect.\n\n**How to apply:** squash button."),
            "b.md": fb("Real database in tests", "Integration tests use the docker database.\n\n**Why:** mocks lied.\n\n**How to apply:** always."),
            "c.md": fb("x", "short"),
            "d.md": fb("x", "short"),
        },
    )
    report = doctor(memory_dir)
    assert only(report, "near-duplicate") == [] and only(report, "duplicate") == []


def test_cjk_text_is_tokenised_in_bigrams() -> None:
    assert tokens("回复用中文") == {"回复", "复用", "用中", "中文"}
    texts = ["用户喜欢简洁的中文回复，不要总结段落", "用户喜欢简洁的中文回复，不要总结的段落", "部署流程在周五冻结，只合并修复"]
    pairs = near_duplicate_pairs(texts, ["user", "user", "user"])
    assert [(p.a, p.b) for p in pairs] == [(0, 1)]


def test_large_blocks_use_minhash_and_find_the_same_pairs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import memtui.core.doctor.duplicates as dup

    texts = [
        "the user wants terse answers without recap paragraphs answer in at most a few sentences unless asked for detail",
        "the user wants terse answers, no recap paragraphs answer in at most a few sentences unless the user asks for detail",
        "integration tests use the docker database because mocks hid a broken migration last quarter",
        "squash every pull request into a single commit so the history stays bisectable",
    ]
    exact = [(p.a, p.b) for p in near_duplicate_pairs(texts, ["feedback"] * 4)]
    monkeypatch.setattr(dup, "EXACT_BLOCK_MAX", 1)
    approx = [(p.a, p.b) for p in near_duplicate_pairs(texts, ["feedback"] * 4)]
    assert exact == approx == [(0, 1)]


# ----- the fast path's parts, each against a plain reading of its definition ------------------

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"


def plain_tokens(text: str) -> set[str]:
    """The module doc's word set, read literally: one scan for CJK runs or other word runs."""
    out: set[str] = set()
    for tok in re.findall(f"[{_CJK}]+|[^\\W{_CJK}]+", text):
        if re.fullmatch(f"[{_CJK}]+", tok):
            out.update(tok[i : i + 2] for i in range(max(1, len(tok) - 1)))
        elif len(tok) > 1 or tok.isdigit():
            out.add(tok)
    return out


def plain_jaccard(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def brute_force(texts: list[str], blocks: list[str], threshold: float = 85, jaccard: float = 0.5) -> dict[tuple[int, int], float]:
    """Every pair of the same block with >= 4 words, Jaccard >= ``jaccard`` and
    ``token_sort_ratio >= threshold`` — all pairs, no prefilter."""
    toks = [plain_tokens(t) for t in texts]
    out: dict[tuple[int, int], float] = {}
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            if blocks[i] != blocks[j] or len(toks[i]) < 4 or len(toks[j]) < 4 or plain_jaccard(toks[i], toks[j]) < jaccard:
                continue
            score = fuzz.token_sort_ratio(texts[i], texts[j])
            if score >= threshold:
                out[(i, j)] = score
    return out


_MIXED = st.text(alphabet=st.sampled_from(list("ab1 2²①_-.,\n\t") + list("中文回复用データのを한국어") + ["\u30fb"]), max_size=40)


@given(_MIXED)
def test_tokens_are_the_documented_word_set(text: str) -> None:
    assert dup.tokens(text) == plain_tokens(text)


def test_tokens_keep_single_digits_and_lone_cjk_characters() -> None:
    # "a" is dropped (a single letter), "5" and "²" kept (digits), "中" alone is its own token
    assert dup.tokens("a 5 ² 中 ok") == {"5", "²", "中", "ok"}


def _generated(n: int, seed: int, vocab_size: int = 60) -> tuple[list[str], list[str]]:
    """``n`` texts over a small vocabulary (so that many pairs share words), a tenth of them a
    copy of an earlier text of their block with two words changed; blocks by ``i mod 3``."""
    rng = random.Random(seed)
    vocab = [f"w{k}" for k in range(vocab_size)] + ["回复", "中文", "简洁"]
    texts: list[str] = []
    for i in range(n):
        if i > 5 and i % 10 == 0:
            words = texts[rng.randrange(i // 3) * 3 + i % 3].split()
            for _ in range(2):
                words[rng.randrange(len(words))] = rng.choice(vocab)
        else:
            words = [rng.choice(vocab) for _ in range(rng.randint(12, 30))]
        texts.append(" ".join(words))
    return texts, ["user" if i % 3 else "project" for i in range(n)]


def test_near_duplicate_pairs_equal_the_brute_force_on_the_exact_path() -> None:
    texts, blocks = _generated(240, seed=1)
    expected = brute_force(texts, blocks)
    assert len(expected) > 20  # the generator plants enough to make this meaningful
    got = {(p.a, p.b): p.score for p in dup.near_duplicate_pairs(texts, blocks)}
    assert got == expected


def test_near_duplicate_pairs_on_the_lsh_path_find_the_close_pairs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    texts, blocks = _generated(240, seed=2)
    expected = brute_force(texts, blocks)
    monkeypatch.setattr(dup, "EXACT_BLOCK_MAX", 1)
    got = {(p.a, p.b): p.score for p in dup.near_duplicate_pairs(texts, blocks)}
    # LSH is approximate (module doc): never a pair the definition rejects, every close one found
    assert set(got) <= set(expected)
    assert all(got[k] == expected[k] for k in got)
    close = {k for k in expected if plain_jaccard(plain_tokens(texts[k[0]]), plain_tokens(texts[k[1]])) >= 0.8}
    assert close and close <= set(got)


def _signature_keys(doc_words: list[list[int]]) -> list[list[int]]:
    """MinHash band keys per document, in plain Python integers (the module's recipe: 64
    hashes ``(a·w + b) mod (2^31 - 1)`` from ``RandomState(MINHASH_SEED)``, 16 bands of 4 rows,
    FNV-1a-style mixing modulo 2^64)."""
    prime = (1 << 31) - 1
    rng = np.random.RandomState(dup.MINHASH_SEED)
    n_hashes = dup.MINHASH_BANDS * dup.MINHASH_ROWS
    a = [int(v) for v in rng.randint(1, prime, size=n_hashes)]
    b = [int(v) for v in rng.randint(0, prime, size=n_hashes)]
    keys = []
    for words in doc_words:
        sig = [min((a[j] * w + b[j]) % prime for w in words) for j in range(n_hashes)]
        row = []
        for band in range(dup.MINHASH_BANDS):
            key = 0xCBF29CE484222325
            for col in range(band * dup.MINHASH_ROWS, (band + 1) * dup.MINHASH_ROWS):
                key = ((key ^ sig[col]) * 0x100000001B3) % (1 << 64)
            row.append(key)
        keys.append(row)
    return keys


def test_minhash_candidates_are_exactly_the_pairs_sharing_a_band() -> None:
    rng = random.Random(3)
    # few distinct words, so that many documents share a band
    doc_words = [sorted(set(rng.sample(range(1, 40), rng.randint(4, 9)))) for _ in range(120)]
    keys = _signature_keys(doc_words)
    expected = {(x, y) for x in range(len(keys)) for y in range(x + 1, len(keys)) if any(kx == ky for kx, ky in zip(keys[x], keys[y], strict=True))}
    words = np.array([w for ws in doc_words for w in ws], dtype=np.int64)
    lens = np.array([len(ws) for ws in doc_words], dtype=np.int64)
    got = dup._minhash_candidates(list(range(len(doc_words))), words, lens)
    assert len(expected) > 50
    assert [tuple(p) for p in got.tolist()] == sorted(expected)
    # the word hashes come as int32 (they are below 2**31): the same pairs, near the top of the
    # range too (a·w + b is worked in 64 bits either way)
    ids = list(range(len(doc_words)))
    assert dup._minhash_candidates(ids, words.astype(np.int32), lens).tolist() == got.tolist()
    big = words + (2**31 - 64)
    assert dup._minhash_candidates(ids, big.astype(np.int32), lens).tolist() == dup._minhash_candidates(ids, big, lens).tolist()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sets(st.integers(0, 60), min_size=1, max_size=25), min_size=2, max_size=25), st.sampled_from([0.3, 0.5, 0.7]), st.sampled_from([64, 128, 2048]))
def test_word_bound_keeps_every_pair_that_reaches_the_jaccard_bound(docs: list[set[int]], jaccard: float, bits: int) -> None:
    dup_bits = dup._BOUND_BITS
    try:
        dup._BOUND_BITS = bits  # 64 bits for up to 25 words: many share one, the `extra` term at work
        words = np.array([w for d in docs for w in sorted(d)], dtype=np.int64)
        lens = np.array([len(d) for d in docs], dtype=np.int64)
        pairs = np.array([(x, y) for x in range(len(docs)) for y in range(x + 1, len(docs))], dtype=np.int64)
        kept = {tuple(p) for p in dup._bounded_pairs(pairs, words, lens, jaccard).tolist()}
    finally:
        dup._BOUND_BITS = dup_bits
    for x, y in pairs.tolist():
        inter = len(docs[x] & docs[y])
        if not inter < jaccard * (len(docs[x]) + len(docs[y]) - inter):
            assert (x, y) in kept


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sets(st.integers(0, 5000), max_size=25), min_size=2, max_size=20), st.sampled_from([1, 2, 3, 7]))
def test_word_bound_is_the_same_built_a_few_memories_at_a_time(docs: list[set[int]], rows: int) -> None:
    # The bitsets are built _BITSET_ROWS memories at a time (empty memories included): any
    # chunking keeps exactly the pairs one chunk for the whole block keeps.
    words = np.array([w for d in docs for w in sorted(d)], dtype=np.int64)
    lens = np.array([len(d) for d in docs], dtype=np.int64)
    pairs = np.array([(x, y) for x in range(len(docs)) for y in range(x + 1, len(docs))], dtype=np.int64)
    whole = dup._bounded_pairs(pairs, words, lens, 0.5).tolist()
    dup_rows = dup._BITSET_ROWS
    try:
        dup._BITSET_ROWS = rows
        assert dup._bounded_pairs(pairs, words, lens, 0.5).tolist() == whole
    finally:
        dup._BITSET_ROWS = dup_rows


def test_word_bound_drops_pairs_that_share_too_few_words() -> None:
    docs = [{1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 5}, {6, 7, 8, 9}]  # J: 1.0, 0.6, 0, …
    words = np.array([w for d in docs for w in sorted(d)], dtype=np.int64)
    lens = np.array([4, 4, 4, 4], dtype=np.int64)
    pairs = np.array([(0, 1), (0, 2), (0, 3), (2, 3)], dtype=np.int64)
    # with 2,048 bits these small ids never share a bit: the bound is the exact intersection
    assert [tuple(p) for p in dup._bounded_pairs(pairs, words, lens, 0.5).tolist()] == [(0, 1), (0, 2)]
    assert [tuple(p) for p in dup._bounded_pairs(pairs, words, lens, 0.7).tolist()] == [(0, 1)]


_WORDS = st.lists(st.sampled_from(["ab", "ba", "abc", "cab", "回复", "复用", "x", "yy"]), min_size=1, max_size=12).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(_WORDS, min_size=2, max_size=12), st.sampled_from([50.0, 70.0, 85.0]), st.sampled_from([2, 1024]))
def test_score_bound_keeps_every_pair_that_reaches_the_threshold(texts: list[str], threshold: float, buckets: int) -> None:
    saved = dup._CHAR_BUCKETS
    try:
        dup._CHAR_BUCKETS = buckets  # 2 buckets: every character shares one, a loose bound
        pairs = np.array([(x, y) for x in range(len(texts)) for y in range(x + 1, len(texts))], dtype=np.int64)
        kept = {tuple(p) for p in dup._score_bound(pairs, texts, list(range(len(texts))), threshold).tolist()}
    finally:
        dup._CHAR_BUCKETS = saved
    for x, y in pairs.tolist():
        if fuzz.token_sort_ratio(texts[x], texts[y]) >= threshold:
            assert (x, y) in kept


def test_score_bound_drops_texts_without_enough_common_characters() -> None:
    # sorted: "abcd abcd" / "abcd dcba": LCS "abcd " + one letter = 6 of 9 + 9: 66.7;
    # "abcd abcd" / "wxyz wxyz": only the space in common: 200 * 1 / 18 = 11.1
    texts = ["abcd abcd", "dcba abcd", "wxyz wxyz"]
    pairs = np.array([(0, 1), (0, 2)], dtype=np.int64)
    assert round(fuzz.token_sort_ratio(texts[0], texts[1]), 1) == 66.7
    # the character bound of (0, 1) is 100 (same characters): kept at 85 although its score is
    # below — the bound only drops what cannot reach; (0, 2) shares one character (a space): 11.1
    assert [tuple(p) for p in dup._score_bound(pairs, texts, [0, 1, 2], 85.0).tolist()] == [(0, 1)]
    assert [tuple(p) for p in dup._score_bound(pairs, texts, [0, 1, 2], 11.0).tolist()] == [(0, 1), (0, 2)]


def test_near_texts_are_made_on_demand() -> None:
    mems = [
        parse_memory_bytes(Path(f"/m/{i}.md"), f"{i}.md", f"---\nname: n\ndescription: Terse  ANSWERS {i}\ntype: user\n---\n\nNo   recap.\n".encode(), 0.0)
        for i in range(3)
    ]
    texts = NearTexts(mems)
    assert len(texts) == 3
    assert texts[1] == near_text(mems[1]) == "terse answers 1 no recap."
    assert list(texts[1:]) == [near_text(mems[1]), near_text(mems[2])]


def plain_lcs(a: str, b: str) -> int:
    """The longest common subsequence by the textbook dynamic programme."""
    row = [0] * (len(b) + 1)
    for ca in a:
        prev_diag = 0
        for j, cb in enumerate(b, start=1):
            prev_diag, row[j] = row[j], prev_diag + 1 if ca == cb else max(row[j], row[j - 1])
    return row[-1]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abc d", max_size=30), st.text(alphabet="abc d", max_size=30), st.floats(0.0, 1.0))
def test_lcs_bound_is_never_below_the_lcs(a: str, b: str, share: float) -> None:
    assert dup._lcs_bound(a, b, share) >= plain_lcs(a, b)
    assert dup._lcs_bound(a, b, 1.0) == plain_lcs(a, b)


def test_lcs_bound_by_hand() -> None:
    # "aaaa" / "bbbb": nothing in common; halves "aa" / "bb" share nothing, rests of 2 and 2: 0 + 2
    assert dup._lcs_bound("aaaa", "bbbb", 0.5) == 2 and plain_lcs("aaaa", "bbbb") == 0
    # "abab" / "abab": halves "ab" / "ab": 2, rests of 2: 4, the true LCS (the bound is tight)
    assert dup._lcs_bound("abab", "abab", 0.5) == 4 == plain_lcs("abab", "abab")
    # share 0: no prefix, only the longer text's length
    assert dup._lcs_bound("abc", "abcde", 0.0) == 5


def test_a_small_store_does_not_import_numpy() -> None:
    """Blocks up to EXACT_BLOCK_MAX memories take the plain-Python path: `memtui doctor` on a
    small store does not pay numpy's import (~0.1 s)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from memtui.core.doctor.duplicates import near_duplicate_pairs\n"
        "texts = ['the user wants terse answers without recap paragraphs at all', 'the user wants terse answers without any recap paragraphs at all']\n"
        "pairs = near_duplicate_pairs(texts, ['user', 'user'])\n"
        "print(len(pairs), 'numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1", "False"]
