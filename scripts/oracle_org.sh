#!/usr/bin/env bash
# Claude Code 2.1.332's organization dream gate (SPEC §13.1) on the variants of
# scripts/oracle_org.py (mark placements, spacing, case, two organizations, an unreadable dir…),
# one interactive run through tmux each (about 1 minute a run), modelled on the oracle's
# run_org.sh. Before each run memtui's `dream status --json` is kept beside it
# (WORK/out/NAME.memtui.json); the CLI's run is kept as tests/captures/claude-2.1.332/org_gate/
# NAME.json; at the end the two verdicts are printed side by side (exit 1 when one differs).
#   CLAUDE=/path/to/claude-2.1.332 bash scripts/oracle_org.sh [WORK] [NAME...]
# WORK defaults to /tmp/memtui-oracle-org; ORACLE to ../shared/oracle/dream-extract; CAPS to the
# capture dir above. The `nobody` variants need root (setpriv); they are skipped otherwise.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"; REPO="$(dirname "$HERE")"
ORACLE="${ORACLE:-$(cd "$REPO/../shared/oracle/dream-extract" 2>/dev/null && pwd || echo /work/shared/oracle/dream-extract)}"
S="$ORACLE/scripts"; W="${1:-/tmp/memtui-oracle-org}"; shift || true
CAPS="${CAPS:-$REPO/tests/captures/claude-2.1.332/org_gate}"
CLAUDE="${CLAUDE:-/tmp/oracle/cc/node_modules/.bin/claude}"
MEMTUI="${MEMTUI:-$REPO/.venv/bin/memtui}"
PY="$HERE/oracle_org.py"
read -r -a NAMES <<<"${*:-$(python3 "$PY" list)}"
mkdir -p "$W/scen" "$W/out"
# the CLI as `nobody`: its HOME made theirs, the debug file's dir writable, then setpriv
cat >"$W/as_nobody.sh" <<EOF
#!/usr/bin/env bash
prev=""; for a in "\$@"; do [ "\$prev" = --debug-file ] && chmod 777 "\$(dirname "\$a")"; prev="\$a"; done
exec setpriv --reuid 65534 --regid 65534 --clear-groups "$CLAUDE" "\$@"
EOF
chmod 755 "$W/as_nobody.sh"
for name in "${NAMES[@]}"; do
  runner="$(python3 "$PY" runner "$name")"
  if [ "$runner" = nobody ] && [ "$(id -u)" != 0 ]; then echo "$name: skipped (needs root for setpriv)"; continue; fi
  rm -rf "$W/scen/$name"
  python3 "$S/build.py" --root "$W/scen" --name "$name" --flags dream >/dev/null
  python3 "$PY" place "$W/scen/$name" "$name"
  home="$W/scen/$name/home"; cwd="$W/scen/$name/proj"; cli="$CLAUDE"; as=()
  if [ "$runner" = nobody ]; then
    chmod 755 "$W" "$W/scen" "$W/scen/$name"
    find "$W/scen/$name" -path '*/locked' -prune -o -print0 | xargs -0 chown 65534:65534
    cli="$W/as_nobody.sh"; as=(setpriv --reuid 65534 --regid 65534 --clear-groups)
  fi
  (cd "$cwd" && env HOME="$home" "${as[@]}" "$MEMTUI" dream status --flavor claude --release 2.1.332 --json) >"$W/out/$name.memtui.json" 2>"$W/out/$name.memtui.err"
  CLAUDE="$cli" timeout 300 python3 "$S/run_cc.py" --scen "$W/scen/$name" --out "$W/out/$name" --mode tmux \
    --prompt "hello there" --wait-kind dream --wait 40 >/dev/null
  python3 "$PY" collect "$W/scen/$name" "$W/out/$name" "$name" "$CAPS"
  echo "$name: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["verdict"], d["reason"] or "", d["debug"][:1])' "$CAPS/$name.json")"
done
python3 "$PY" compare "$W" "$CAPS"
