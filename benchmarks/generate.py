"""The reproducible synthetic workspace every benchmark runs on (issue 8).

``python benchmarks/generate.py OUT [--n 20000] [--seed 8]`` writes, below ``OUT``:

- ``home/`` — a HOME whose ``.agent/projects/<slug(OUT/repo)>/`` holds
  - ``memory/``: ``n`` memories (default 20,000) of 200 B – 6 KB (log-uniform, a tail over the
    4,096-byte recall limit), the four types in turn, English / Chinese / Japanese prose
    (about 70 / 15 / 15 %), 5 % near-duplicates of an earlier memory (a few words changed), 3 %
    with ``type`` nested under ``metadata:``, 1 % with a description the YAML loader rejects
    until the reference's quoting retry fixes it, a tenth under ``team/``, a third in
    subdirectories, and a ``MEMORY.md`` index linking 90 % of them (far past the 200-line cap,
    as a real index at this scale would be);
  - 200 session transcripts ``<uuid>.jsonl`` (docs/behaviour.md §7: user / assistant entries, ``text``,
    ``tool_use`` and ``tool_result`` blocks, ``timestamp``, ``cwd``, ``sessionId``), a few of
    them writing inside the memory dir;
- ``repo/`` — the project: a tree 40 directories deep with 1,000 rule files (``build_tree``, the
  one ``cascade_bench.py`` times), the cwd for the cascade at the bottom;
- ``workspace.json`` — what was generated (paths, counts, seed, the clock).

Everything comes from ``random.Random(seed)`` and fixed word lists; mtimes are spread over two
years before the fixed clock ``NOW`` (memories) or the last 30 days (transcripts), so two runs
with the same arguments write byte-identical files with identical mtimes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memtui.core.places.slug import slugify  # noqa: E402

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
TYPES = ("user", "feedback", "project", "reference")
DEPTH = 40
RULES_PER_DIR = 25  # 40 x 25 = 1,000 rule files
SESSIONS = 200

# Common English words (real prose shares these) and syllable-made rare words (where memories differ).
COMMON = (
    "the a to of and in is for on that with as it be by this we use when not from at or are should "
    "always never before after run test build deploy check prefer avoid keep make sure only new old "
    "file config service team user review release branch commit merge database query cache index api "
    "client server error log metric alert latency timeout retry queue worker job schedule migration "
    "schema table column backup restore token secret staging production dashboard ticket incident"
).split()
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "del", "tor", "ban", "fin", "gra", "mox", "pel"]
ZH = ("迁移 计划 数据库 测试 发布 监控 延迟 告警 值班 合作 伙伴 限流 保留 删除 格式 提交 审批 工单 面板 消费 "
      "生产 队列 分区 索引 缓存 日志 错误 重试 超时 配置 用户 偏好 代码 评审 分支 合并 服务 接口 文档 流程").split()
JA = ("テスト データ リリース 監視 遅延 障害 対応 手順 設定 変換 画面 承認 本番 環境 接続 検証 移行 計画 担当 確認 "
      "通知 集計 保存 削除 更新 取得 送信 受信 分析 レビュー ブランチ 設計 運用 会議 資料 顧客 要件 仕様").split()
JA_PARTICLES = ["は", "を", "に", "で", "の", "が", "と"]
ZH_PARTICLES = ["的", "在", "和", "把", "要", "不", "先"]
# Real Chinese and Japanese prose is not 40 words: like the English ``COMMON`` + rare words, the
# common words above are mixed with rare two- and three-character words made from the ~600 most
# frequent hanzi (Chinese; kanji in Japanese) and, in Japanese, katakana loanwords. (With 40 words
# only, every pair of CJK memories shared most character bigrams: every pair was a near-duplicate
# candidate.)
HANZI = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坐集编宝谈府拉黑且随格尽剑讲布杀微怕母调局根曾准团段终乐切级克精哪官示冷域称"
)
KATAKANA = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワンガギグゲゴザジズゼゾダデドバビブベボパピプペポ"


def cjk_vocabulary(rng: random.Random, size: int = 3000) -> tuple[list[str], list[str]]:
    """``size`` rare Chinese words and ``size`` rare Japanese words (hanzi/kanji compounds;
    a third of the Japanese ones katakana), deterministic for a given ``rng`` state."""
    zh: set[str] = set()
    while len(zh) < size:
        zh.add("".join(rng.choice(HANZI) for _ in range(rng.choice((2, 2, 2, 3)))))
    ja: set[str] = set()
    while len(ja) < size:
        if rng.random() < 0.33:
            ja.add("".join(rng.choice(KATAKANA) for _ in range(rng.randint(3, 5))) + ("ー" if rng.random() < 0.3 else ""))
        else:
            ja.add("".join(rng.choice(HANZI) for _ in range(2)))
    return sorted(zh), sorted(ja)


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    """``size`` made-up rare words (deterministic for a given ``rng`` state)."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


@dataclass(frozen=True, slots=True)
class Workspace:
    """Where ``generate`` put things."""

    root: Path
    home: Path
    project: Path  # the project root (memory dir and sessions are keyed on it)
    memory_dir: Path
    sessions_dir: Path
    deep_cwd: Path  # the bottom of the 40-deep tree
    n: int
    seed: int

    def env(self) -> dict[str, str]:
        """Environment for a memtui run confined to this workspace (no real home)."""
        return {
            "HOME": str(self.home),
            "AGENT_CONFIG_DIR": str(self.home / ".agent"),
            "MEMTUI_MANAGED_DIR": str(self.root / "managed"),
            "MEMTUI_STATE_DIR": str(self.root / "state"),
            "MEMTUI_NOW": NOW.isoformat(),
        }


_CJK_RARE: dict[int, tuple[list[str], tuple[list[str], list[str]]]] = {}


def _cjk_words(vocab: list[str]) -> tuple[list[str], list[str]]:
    """The rare CJK words that go with the English rare-word list ``vocab`` (made once per
    list, from a seed derived from its words: the same for every run with the same seed)."""
    held = _CJK_RARE.get(id(vocab))
    if held is None or held[0] is not vocab:
        held = _CJK_RARE[id(vocab)] = (vocab, cjk_vocabulary(random.Random(len(vocab) * 7919 + sum(map(len, vocab)))))
    return held[1]


def _sentence(rng: random.Random, lang: str, vocab: list[str]) -> str:
    if lang == "zh":
        rare = _cjk_words(vocab)[0]
        parts = [(rng.choice(ZH) if rng.random() < 0.6 else rng.choice(rare)) + (rng.choice(ZH_PARTICLES) if rng.random() < 0.5 else "") for _ in range(rng.randint(4, 10))]
        return "".join(parts) + "。"
    if lang == "ja":
        rare = _cjk_words(vocab)[1]
        parts = [(rng.choice(JA) if rng.random() < 0.6 else rng.choice(rare)) + rng.choice(JA_PARTICLES) for _ in range(rng.randint(4, 9))]
        return "".join(parts) + "。"
    words = [rng.choice(COMMON) if rng.random() < 0.6 else rng.choice(vocab) for _ in range(rng.randint(6, 16))]
    return " ".join(words).capitalize() + "."


def _prose(rng: random.Random, lang: str, vocab: list[str], size: int) -> str:
    """Paragraphs of about ``size`` bytes (UTF-8)."""
    out: list[str] = []
    total = 0
    while total < size:
        para = " ".join(_sentence(rng, lang, vocab) for _ in range(rng.randint(2, 5)))
        out.append(para)
        total += len(para.encode("utf-8")) + 2
    return "\n\n".join(out)


def _target_size(rng: random.Random) -> int:
    """200 B – 6 KB, log-uniform (most memories are short, a tail passes the 4 KB recall cap)."""
    return int(math.exp(rng.uniform(math.log(200), math.log(6144))))


def _mutate(text: str, rng: random.Random, vocab: list[str], changes: int = 3) -> str:
    words = text.split(" ")
    for _ in range(changes):
        words[rng.randrange(len(words))] = rng.choice(vocab)
    return " ".join(words)


def write_memories(memory_dir: Path, n: int, seed: int) -> list[str]:
    """Write ``n`` memories and ``MEMORY.md`` below ``memory_dir``; return their relpaths."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    memory_dir.mkdir(parents=True, exist_ok=True)
    start = NOW.timestamp() - 730 * 86_400
    written: list[tuple[str, str, str]] = []  # (relpath, name, description)
    originals: list[tuple[str, str, str]] = []  # (type, description, body) for near-duplicates
    for i in range(n):
        kind = TYPES[i % 4]
        roll = rng.random()
        lang = "zh" if roll < 0.15 else "ja" if roll < 0.30 else "en"
        if originals and rng.random() < 0.05:
            kind, desc, body = rng.choice([o for o in originals[-400:] if o[0] == kind] or originals[-1:])
            body = _mutate(body, rng, vocab)
        else:
            desc = _sentence(rng, lang, vocab).rstrip(".。")[:150]
            size = _target_size(rng)
            body = _prose(rng, lang, vocab, max(60, size - 160))
            if kind in ("feedback", "project"):
                body += f"\n\n**Why:** {_sentence(rng, lang, vocab)}\n\n**How to apply:** {_sentence(rng, lang, vocab)}"
            if kind == "project" and rng.random() < 0.05:
                body += " The rollout starts next Thursday."
            originals.append((kind, desc, body))
        name = f"{kind} note {i}"
        if rng.random() < 0.01:  # invalid YAML until the reference's quoting retry: `: ` in a plain value
            desc = f"Rule: {desc}"
        head = [f"name: {name}", f"description: {desc}"]
        if rng.random() < 0.03:
            head.append(f"metadata:\n  type: {kind}")
        else:
            head.append(f"type: {kind}")
        if rng.random() < 0.2:
            head.append(f"originSessionId: {uuid.UUID(int=rng.getrandbits(128))}")
        if rng.random() < 0.1 and written:
            head.append(f"related: [{rng.choice(written)[0]}]")
        sub = ("team/" if i % 10 == 0 else "") + (f"topic-{i % 30:02d}/" if i % 3 == 0 else "")
        relpath = f"{sub}{kind}-{i:05d}.md"
        path = memory_dir / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "---\n" + "\n".join(head) + "\n---\n\n" + body + "\n"
        while len(text.encode("utf-8")) < 200:  # the floor of the size range
            text += _sentence(rng, lang, vocab) + "\n"
        if len(text.encode("utf-8")) > 6144:  # the ceiling: cut at the last space or line end before 6 KiB
            cut = text.encode("utf-8")[:6143].decode("utf-8", errors="ignore")
            text = cut[: max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("。"))].rstrip() + "\n"
        path.write_text(text, encoding="utf-8")
        mtime = start + rng.randrange(730 * 86_400)
        os.utime(path, (mtime, mtime))
        written.append((relpath, name, desc))
    lines = [f"- [{name}]({rel}) — {desc[:80]}" for k, (rel, name, desc) in enumerate(written) if k % 10 and not rel.startswith("team/")]
    (memory_dir / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    team_lines = [f"- [{name}]({rel.removeprefix('team/')}) — {desc[:80]}" for rel, name, desc in written if rel.startswith("team/")]
    if team_lines:
        (memory_dir / "team" / "MEMORY.md").write_text("\n".join(team_lines) + "\n", encoding="utf-8")
    for index in (memory_dir / "MEMORY.md", memory_dir / "team" / "MEMORY.md"):
        if index.exists():
            os.utime(index, (NOW.timestamp() - 3600, NOW.timestamp() - 3600))
    return [rel for rel, _, _ in written]


def write_transcripts(sessions_dir: Path, cwd: Path, memory_dir: Path, relpaths: list[str], seed: int, count: int = SESSIONS) -> None:
    """Write ``count`` JSONL session transcripts (docs/behaviour.md §7) into ``sessions_dir``."""
    rng = random.Random(seed + 1)
    vocab = vocabulary(random.Random(seed))
    sessions_dir.mkdir(parents=True, exist_ok=True)
    for s in range(count):
        session_id = str(uuid.UUID(int=rng.getrandbits(128)))
        t = NOW - timedelta(days=30) + timedelta(seconds=rng.randrange(30 * 86_400))
        lines: list[str] = []
        state: dict[str, object] = {"t": t, "parent": None}

        def entry(kind: str, content: object) -> None:
            clock = state["t"] = state["t"] + timedelta(seconds=rng.randint(2, 90))  # type: ignore[operator]
            uid = str(uuid.UUID(int=rng.getrandbits(128)))
            lines.append(json.dumps({
                "type": kind, "uuid": uid, "parentUuid": state["parent"], "timestamp": clock.strftime("%Y-%m-%dT%H:%M:%S.000Z"),  # type: ignore[attr-defined]
                "cwd": str(cwd), "sessionId": session_id, "isSidechain": False,
                "message": {"role": kind, "content": content},
            }, ensure_ascii=False))
            state["parent"] = uid

        for turn in range(rng.randint(3, 12)):
            entry("user", _sentence(rng, "en" if rng.random() < 0.8 else "zh", vocab))
            for call in range(rng.randint(0, 4)):
                tool_id = f"toolu_{s:03d}{turn:02d}{call}"
                tool = rng.choice(["Read", "Grep", "Bash", "Edit", "Glob"])
                if tool == "Bash":
                    tool_input: dict[str, object] = {"command": f"pytest -q tests/test_{rng.choice(vocab)}.py"}
                elif tool == "Grep":
                    tool_input = {"pattern": rng.choice(vocab)}
                else:
                    tool_input = {"file_path": str(cwd / "src" / f"{rng.choice(vocab)}.py")}
                entry("assistant", [{"type": "text", "text": _sentence(rng, "en", vocab)},
                                    {"type": "tool_use", "id": tool_id, "name": tool, "input": tool_input}])
                entry("user", [{"type": "tool_result", "tool_use_id": tool_id, "is_error": rng.random() < 0.1,
                                "content": _prose(rng, "en", vocab, rng.randint(80, 1500))}])
            if rng.random() < 0.05:  # the main agent saves a memory itself
                tool_id = f"toolu_{s:03d}{turn:02d}w"
                target = memory_dir / rng.choice(relpaths)
                entry("assistant", [{"type": "tool_use", "id": tool_id, "name": "Write",
                                     "input": {"file_path": str(target), "content": "---\nname: x\n---\n"}}])
                entry("user", [{"type": "tool_result", "tool_use_id": tool_id, "is_error": False, "content": "ok"}])
            entry("assistant", [{"type": "text", "text": _prose(rng, "en", vocab, rng.randint(100, 800))}])
        path = sessions_dir / f"{session_id}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.utime(path, (t.timestamp() + 3600, t.timestamp() + 3600))


def build_tree(root: Path) -> Path:
    """The cascade's deep project tree below ``root/repo``: 40 nested directories, each with an
    ``AGENT.md`` (importing a doc) and 25 rules in ``.agent/rules/`` (every other one conditional
    on ``paths:`` with a brace glob, a fifth in ``sub/``, every tenth importing a doc) — 1,000
    rule files. Fixed content (no randomness). Returns the deepest directory (the cwd)."""
    current = root / "repo"
    for level in range(DEPTH):
        current.mkdir(parents=True, exist_ok=True)
        (current / "AGENT.md").write_text(f"# Level {level}\n\nInstructions for level {level}. See @docs/shared.md\n")
        (current / "docs").mkdir(exist_ok=True)
        (current / "docs" / "shared.md").write_text(f"Shared doc of level {level}.\n")
        rules = current / ".agent" / "rules"
        (rules / "sub").mkdir(parents=True, exist_ok=True)
        for i in range(RULES_PER_DIR):
            where = rules / "sub" if i % 5 == 0 else rules
            head = f"---\npaths:\n  - \"src/mod{i}/**\"\n  - \"**/*.{{ts,tsx}}\"\n---\n" if i % 2 else ""
            body = f"# Rule {level}-{i}\n\n" + "".join(f"- guideline {j} for rule {i}\n" for j in range(12))
            if i % 10 == 0:  # always in sub/: the doc is three levels up from the rule
                (current / "docs" / f"rule-{i:02d}.md").write_text(f"Background for rule {level}-{i}.\n")
                body += f"\nBackground: @../../../docs/rule-{i:02d}.md\n"
            (where / f"rule-{i:02d}.md").write_text(head + body)
        current = current / f"d{level:02d}"
    current.mkdir(parents=True, exist_ok=True)
    return current


def queries(count: int, seed: int) -> list[str]:
    """``count`` recall queries drawn from the workspace's vocabulary (a quarter CJK)."""
    rng = random.Random(seed + 2)
    vocab = vocabulary(random.Random(seed))
    out: list[str] = []
    for i in range(count):
        if i % 8 == 0:
            out.append(" ".join(rng.choices(ZH, k=3)))
        elif i % 8 == 4:
            out.append(" ".join(rng.choices(JA, k=3)))
        else:
            out.append(" ".join(rng.choice(COMMON) if rng.random() < 0.3 else rng.choice(vocab) for _ in range(rng.randint(3, 6))))
    return out


def workspace_paths(out: Path, n: int, seed: int) -> Workspace:
    """The layout of a workspace at ``out`` (nothing is written)."""
    root = Path(os.path.realpath(out))
    home = root / "home"
    project = root / "repo"
    project_dir = home / ".agent" / "projects" / slugify(str(project))
    deep = project
    for level in range(DEPTH):
        deep = deep / f"d{level:02d}"
    return Workspace(root, home, project, project_dir / "memory", project_dir, deep, n, seed)


def generate(out: Path, n: int = 20_000, seed: int = 8) -> Workspace:
    """Write the whole workspace below ``out`` (created; must be empty or absent)."""
    out.mkdir(parents=True, exist_ok=True)
    ws = workspace_paths(out, n, seed)
    (ws.root / "managed").mkdir(exist_ok=True)
    (ws.root / "state").mkdir(exist_ok=True)
    build_tree(ws.root)
    relpaths = write_memories(ws.memory_dir, n, seed)
    write_transcripts(ws.sessions_dir, ws.project, ws.memory_dir, relpaths, seed)
    meta = {"n": n, "seed": seed, "now": NOW.isoformat(), "home": str(ws.home), "project": str(ws.project),
            "memory_dir": str(ws.memory_dir), "sessions_dir": str(ws.sessions_dir), "deep_cwd": str(ws.deep_cwd),
            "rule_files": DEPTH * RULES_PER_DIR, "sessions": SESSIONS}
    (ws.root / "workspace.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return ws


def load_workspace(out: Path) -> Workspace:
    """The workspace ``generate`` wrote at ``out`` (reads ``workspace.json``)."""
    meta = json.loads((out / "workspace.json").read_text(encoding="utf-8"))
    return workspace_paths(out, meta["n"], meta["seed"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="directory to write the workspace into (created)")
    parser.add_argument("--n", type=int, default=20_000, help="number of memories (default 20,000)")
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args()
    ws = generate(args.out, args.n, args.seed)
    print(f"{args.n:,} memories in {ws.memory_dir}\n{SESSIONS} transcripts in {ws.sessions_dir}\n"
          f"{DEPTH}-deep tree with {DEPTH * RULES_PER_DIR:,} rules below {ws.project} (cwd {ws.deep_cwd})")


if __name__ == "__main__":
    main()
