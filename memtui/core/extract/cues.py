"""The offline extractor's cue finder: explicit "remember this" requests in what a person typed.

With no API key memtui cannot judge what in a conversation is worth remembering, so the
offline extractor only catches **explicit** requests and proposes one memory per request,
marked as heuristic. Cues (memtui's list, from the issue that asked for this extractor):

- English: ``remember (that|to)…``, ``keep in mind…``, ``don't forget…`` in the imperative
  (at the start of a sentence, after fillers such as "and", "also", "please"); ``from now on``,
  ``going forward``, ``from here on`` anywhere in a sentence; ``don't ever…`` / ``never ever…``.
- Chinese: ``记住…`` (only when nothing but fillers such as 请/你要/一定/另外 precedes it:
  ``我没记住端口`` is not a request), ``以后…`` / ``今后…`` / ``从现在开始…`` at the start of a
  sentence **and** followed by a directive word (都/不要/别/要/请/必须/一律/统一/总是/只…), so
  ``以后再说`` is not one.
- Japanese: ``覚えて…`` (``覚えておいて``, ``覚えてください``) but not ``覚えてない`` /
  ``覚えていません`` / ``覚えてる``; ``今後は…`` / ``これからは…`` at the start of a sentence.

Questions (a sentence ending in ``?``, ``？``, ``吗``, ``か``) never count: "do you remember the
port?" asks, it does not instruct. Mentions in passing ("I don't remember the port") never
match because the verb is not in the imperative position.

A cue's *statement* is the sentence without the cue words ("remember that we never deploy on
Fridays." → "We never deploy on Fridays."). Its memory type is ``user`` when the statement is
about the person ("I'm a data scientist…", "我是…", "私は…"), else ``feedback``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from memtui.core.memory.memories import MemoryType

CueKind = Literal["remember", "from-now-on", "never"]
Language = Literal["en", "zh", "ja"]

# Longest name / description memtui proposes (characters). 150: the index line budget of
# docs/behaviour.md §4.4 ("one line per memory … under ~150 characters").
NAME_MAX_WORDS = 8
NAME_MAX_CJK = 24
DESCRIPTION_MAX = 150

_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？；])|\n+")
_EN_LEAD = r"(?:(?:and|also|but|so|ok|okay|oh|btw|by the way|just|hey|one more thing|please|pls|plz|always)\b[\s,:;-]*)*"
_EN_REMEMBER = re.compile(
    rf"^{_EN_LEAD}(?P<cue>remember|keep in mind|don't forget|do not forget|never forget)\b[\s,:;-]*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
# What follows "remember" when it is not an instruction to store a fact.
_EN_NOT_A_FACT = re.compile(r"^(?:when|what|where|how|why|if|whether|who|which|me|you|him|her|them|this\?|it\?)\b", re.IGNORECASE)
_EN_FROM_NOW = re.compile(r"[\s,;:-]*\b(?:from now on|going forward|from here on(?: out)?|henceforth)\b[\s,;:-]*", re.IGNORECASE)
_EN_NEVER = re.compile(rf"^{_EN_LEAD}(?P<rule>(?:don't|do not|never) ever\b.*)$", re.IGNORECASE | re.DOTALL)
_EN_LEAD_ONLY = re.compile(rf"^{_EN_LEAD}", re.IGNORECASE)

_ZH_FILLERS = r"(?:请|你|您|要|一定|务必|还有|另外|也|都|对了|好的|好|嗯|那|并且|而且|还|再|帮我|给我|替我|麻烦|以后也|[\s，,、：:])*"
_ZH_REMEMBER = re.compile(rf"^{_ZH_FILLERS}记住(?![了吗没])[\s：:，,、]*(?:一下|这一?点|这个)?[\s：:，,、]*(?P<rest>.+)$", re.DOTALL)
_ZH_FROM_NOW = re.compile(rf"^{_ZH_FILLERS}(?:从今以后|从现在开始|从现在起|以后|今后|往后)[\s：:，,、]*(?P<rest>.+)$", re.DOTALL)
_ZH_DIRECTIVE = re.compile(r"都|不要|别|要|请|必须|一律|统一|总是|永远|只|不准|禁止|不许|记得|务必|一定|不能|不用")

_JA_REMEMBER = re.compile(r"覚えて(?!な|い|ま|る|た|も)")
_JA_CUE_PHRASE = re.compile(
    r"(?:ということを|ことを|って|を|と)?覚えて(?:おいて|おけ|置いて)?(?:ください|下さい|ほしい|欲しい|くれ|ね|な|よ)*[\s：:、，,]*"
)
_JA_FROM_NOW = re.compile(r"^(?:(?:あと|それと|また|では|じゃあ)[、,\s]*)*(?:今後は|これからは|以後は?)[\s、，,：:]*(?P<rest>.+)$", re.DOTALL)

_QUESTION_END = re.compile(r"(?:[?？]|吗|か|かな)\s*[.。!！]*$")
_USER_EN = re.compile(r"^(?:i am|i'm|im|i work|i've been|i have been|i prefer|i like|i use|i live|i'm based|my (?:role|job|name|team|background|title|timezone|time zone))\b", re.IGNORECASE)
_USER_ZH = re.compile(r"^(?:我是|我在|我的|我负责|我喜欢|我更喜欢|我习惯|我住)")
_USER_JA = re.compile(r"^(?:私は|僕は|俺は|私の|わたしは|自分は)")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_TRAIL = " \t\r\n.,;:!。，；：！、"


@dataclass(frozen=True, slots=True)
class Cue:
    """One explicit request: ``kind`` of cue, ``lang``, the ``sentence`` as typed (whitespace
    collapsed) and the ``statement`` to remember (cue words removed, first letter upper-cased,
    final punctuation kept as one ``.`` / ``。``), and its proposed ``type``."""

    kind: CueKind
    lang: Language
    sentence: str
    statement: str
    type: MemoryType


def split_sentences(text: str) -> list[str]:
    """``text`` cut into sentences: after ``. ! ? ;`` followed by space, after ``。！？；``, and
    at line breaks. Empty pieces are dropped; whitespace inside a sentence is collapsed."""
    out = []
    for piece in _SENTENCE_END.split(text.replace("\u2019", "'")):
        piece = " ".join(piece.split())
        if piece:
            out.append(piece)
    return out


def _finish(statement: str, cjk: bool) -> str:
    statement = statement.strip(_TRAIL)
    if not statement:
        return ""
    statement = statement[0].upper() + statement[1:]
    return statement + ("。" if cjk else ".")


def _kind_of(statement: str) -> MemoryType:
    s = statement.strip()
    return "user" if _USER_EN.match(s) or _USER_ZH.match(s) or _USER_JA.match(s) else "feedback"


def _english(sentence: str) -> tuple[CueKind, str] | None:
    m = _EN_REMEMBER.match(sentence)
    if m:
        rest = m.group("rest")
        if _EN_NOT_A_FACT.match(rest):
            return None
        rest = re.sub(r"^(?:that|this)\b[\s:,-]*", "", rest, flags=re.IGNORECASE)
        rest = re.sub(r"^to\s+", "", rest, flags=re.IGNORECASE)
        return ("remember", rest) if rest.strip(_TRAIL) else None
    m = _EN_NEVER.match(sentence)
    if m:
        return "never", m.group("rule")
    if _EN_FROM_NOW.search(sentence):
        rest = _EN_FROM_NOW.sub(" ", sentence)
        rest = _EN_LEAD_ONLY.sub("", rest.strip())
        return ("from-now-on", rest) if rest.strip(_TRAIL) else None
    return None


def _chinese(sentence: str) -> tuple[CueKind, str] | None:
    m = _ZH_REMEMBER.match(sentence)
    if m:
        return "remember", m.group("rest")
    m = _ZH_FROM_NOW.match(sentence)
    if m and _ZH_DIRECTIVE.search(m.group("rest")) and not m.group("rest").startswith("再"):
        return "from-now-on", m.group("rest")
    return None


def _japanese(sentence: str) -> tuple[CueKind, str] | None:
    if _JA_REMEMBER.search(sentence):
        rest = _JA_CUE_PHRASE.sub("", sentence, count=1)
        rest = re.sub(r"^(?:これ|次のこと|以下)[\s：:、]*", "", rest)
        return ("remember", rest) if rest.strip(_TRAIL) else None
    m = _JA_FROM_NOW.match(sentence)
    if m:
        return "from-now-on", m.group("rest")
    return None


def find_cues(text: str) -> list[Cue]:
    """Every explicit remember-request in ``text`` (one human turn), in order; see the module
    docstring for the cue list. Never raises; ``[]`` when there is none."""
    cues: list[Cue] = []
    for sentence in split_sentences(text):
        if _QUESTION_END.search(sentence):
            continue
        cjk = bool(_CJK.search(sentence))
        found: tuple[CueKind, str] | None = None
        lang: Language = "en"
        if cjk:
            kana = bool(re.search(r"[\u3040-\u30ff]", sentence))
            for lang_try, finder in (("ja", _japanese), ("zh", _chinese)) if kana else (("zh", _chinese), ("ja", _japanese)):
                found = finder(sentence)
                if found:
                    lang = lang_try  # type: ignore[assignment]
                    break
        if found is None:
            found = _english(sentence)
            lang = "en" if found else lang
        if found is None:
            continue
        kind, rest = found
        statement = _finish(" ".join(rest.split()), bool(_CJK.search(rest)) and not re.search(r"[A-Za-z]{4,}\s+[A-Za-z]{3,}", rest))
        if statement:
            cues.append(Cue(kind, lang, sentence, statement, _kind_of(statement)))
    return cues


def cue_name(statement: str) -> str:
    """A short name for a memory holding ``statement``: its first clause (cut at ``, ; : (``,
    " so ", " because ", " but ", ``，；：（``), at most 8 words (24 characters for CJK), no final
    punctuation."""
    first = re.split(r"[,;:(—–]|\s(?:so|because|but|which|since)\s|[，；：（、]", statement, maxsplit=1)[0].strip(_TRAIL)
    if _CJK.search(first) and " " not in first:
        return first[:NAME_MAX_CJK]
    words = first.split()
    return " ".join(words[:NAME_MAX_WORDS]) or statement.strip(_TRAIL)[:NAME_MAX_CJK]


def cue_description(statement: str) -> str:
    """``statement`` as a one-line description of at most 150 characters (cut at a word
    boundary with ``…`` when longer)."""
    line = " ".join(statement.split())
    if len(line) <= DESCRIPTION_MAX:
        return line
    cut = line[: DESCRIPTION_MAX - 1]
    if " " in cut[DESCRIPTION_MAX // 2 :]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(_TRAIL) + "…"
