#!/usr/bin/env bash
# Run memtui's own oracle scenarios (scripts/oracle_scenarios.py) through the real Claude Code CLI
# and memtui (--flavor claude), as ../shared/oracle/run.sh does for the shared ones.
#   bash scripts/oracle_own.sh [WORK_DIR]        (from the project root)
# WORK_DIR (default /tmp/oracle-own) holds scen/ and captures/. The CLI is the one the shared
# run.sh installed: $CLAUDE, else $CLAUDE_WORK/cc (CLAUDE_WORK default /tmp/oracle), installed
# there by ../shared/oracle/run.sh when missing or another version (CC_VERSION, default 2.1.332).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ORACLE="${ORACLE:-$ROOT/../shared/oracle}"
WORK="${1:-/tmp/oracle-own}"
CC_VERSION="${CC_VERSION:-2.1.332}"
CLAUDE_WORK="${CLAUDE_WORK:-/tmp/oracle}"
MEMTUI="${MEMTUI:-}"
if [ -z "$MEMTUI" ]; then
  if [ -x "$ROOT/.venv/bin/memtui" ]; then MEMTUI="$ROOT/.venv/bin/memtui"; else MEMTUI="$(command -v memtui || true)"; fi
fi
[ -n "$MEMTUI" ] || { echo "no memtui: install the project (pip install -e .) or set MEMTUI" >&2; exit 2; }
CLAUDE="${CLAUDE:-$CLAUDE_WORK/cc/node_modules/.bin/claude}"
if [ ! -x "$CLAUDE" ] || ! "$CLAUDE" --version 2>/dev/null | grep -q "^$CC_VERSION"; then
  mkdir -p "$CLAUDE_WORK/cc"
  (cd "$CLAUDE_WORK/cc" && { [ -f package.json ] || npm init -y >/dev/null; } \
    && npm install --no-audit --no-fund "@anthropic-ai/claude-code@$CC_VERSION" >/dev/null)
fi
"$CLAUDE" --version
python3 "$ROOT/scripts/oracle_scenarios.py" --root "$WORK/scen"
rm -rf "$WORK/captures"
python3 "$ORACLE/run_oracle.py" --claude "$CLAUDE" --memtui "$MEMTUI" --scen "$WORK/scen" --out "$WORK/captures"
python3 "$ORACLE/compare.py" "$WORK/captures" > "$WORK/captures/compare.stdout.md"
python3 "$ORACLE/compare_extra.py" "$WORK/captures" --shared-compare "$ORACLE" | tail -n 1
echo "reports: $WORK/captures/compare.md, $WORK/captures/compare_extra.md (combined rows: combined.json)"
