#!/usr/bin/env bash
# End to end: the real stratbench binary in tmux, driven with send-keys and
# read with capture-pane, the strategy saved the ways editors save it.
# Prints the save-to-first-hook latency it measured.
#
# Every wait is for a condition, with a timeout and a message naming what it
# waited for. Each tmux session gets a socket of its own: reusing a socket
# right after kill-server races with the old server's shutdown ("server
# exited unexpectedly").
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
sockets=()
sock=""
# session NAME COMMAND: starts a 120x40 tmux session on a fresh socket and
# makes it the one the helpers below talk to.
session() {
  sock="stratbench-e2e-$$-$1"
  sockets+=("$sock")
  tmux -L "$sock" new-session -d -s e2e -x 120 -y 40 "$2"
}
cleanup() {
  for s in "${sockets[@]}"; do tmux -L "$s" kill-server 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/stratbench" .
export STRATBENCH_HOME="$work/home" NO_COLOR=1
mkdir -p "$work/strat"
strat="$work/strat/strategy.py"

# diagnose, when a step sets it, names a function fail runs to say more
# than the screen does (the state of the jobs, the process tree).
diagnose=""
fail() {
  echo "e2e-tui: FAIL: $*" >&2
  echo "----- screen -----" >&2
  tmux -L "$sock" capture-pane -p -t e2e >&2 || true
  if [ -n "$diagnose" ]; then "$diagnose" >&2 || true; fi
  exit 1
}
screen() { tmux -L "$sock" capture-pane -p -t e2e; }
# wait_for PATTERN [SECONDS]: until the screen matches the extended regexp.
wait_for() {
  local deadline=$((SECONDS + ${2:-20}))
  while ((SECONDS < deadline)); do
    if screen | grep -Eq -- "$1"; then return 0; fi
    sleep 0.01
  done
  fail "screen never showed /$1/ within ${2:-20} s"
}
# wait_gone PATTERN [SECONDS]: until the screen no longer matches.
wait_gone() {
  local deadline=$((SECONDS + ${2:-10}))
  while ((SECONDS < deadline)); do
    if ! screen | grep -Eq -- "$1"; then return 0; fi
    sleep 0.01
  done
  fail "screen still showed /$1/ after ${2:-10} s"
}
# quit_ok: q, and the session's stratbench exits 0.
quit_ok() {
  tmux -L "$sock" send-keys -t e2e q
  wait_for "STRATBENCH-EXITED rc=0" 10
}
jobs_count() { "$work/stratbench" jobs --output json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
# wait_jobs N: until N jobs are finished (no job still running).
wait_jobs() {
  local deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    local n
    n=$("$work/stratbench" jobs --output json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(len([r for r in j if r["status"] != "running"]))')
    if [ "$n" -ge "$1" ]; then return 0; fi
    sleep 0.1
  done
  fail "expected $1 finished jobs within 30 s, have $(jobs_count)"
}
save_in_place() { cat >"$strat"; }                             # nano, VS Code: truncate + write
save_atomic() { cat >"$strat.tmp.$$" && mv "$strat.tmp.$$" "$strat"; }  # vim/JetBrains style rename

passing() {
  cat <<EOF
# version $1
def on_data(ctx, history):
    if len(history) == 50:
        print("version $1 sees", ctx.symbol)
EOF
}

passing 1 | save_in_place
session main "cd '$work/strat' && '$work/stratbench' strategy.py; echo STRATBENCH-EXITED rc=\$?; sleep 60"

echo "1. the first run passes; hook stats and gauges are on screen"
wait_for "PASSED"
wait_for "on_data +20,160"
wait_for "memory"
wait_for "processes"
wait_jobs 1

# CPU of stratbench itself while it waits for the next save.
pid=$(pgrep -f "^$work/stratbench strategy.py" | head -1)
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
t0=$(ticks); sleep 5; t1=$(ticks)
hz=$(getconf CLK_TCK)
echo "   idle in watch mode: $(python3 -c "print(f'{100 * ($t1 - $t0) / $hz / 5:.2f}')") % of a core"

echo "2. an atomic-rename save of a failing version shows the failure and its traceback"
cat <<'EOF' | save_atomic
def size(cash, price):
    return cash / (price - price)


def on_data(ctx, history):
    if len(history) == 20:
        size(ctx.cash, ctx.bar.close)
EOF
wait_for "FAILED"
wait_for "ZeroDivisionError"
wait_for "return cash / \(price - price\)"
wait_jobs 2

echo "3. an in-place save re-runs"
before=$(date +%s%N)
passing 3 | save_in_place
wait_for "version 3 sees"
after=$(date +%s%N)
wait_for "PASSED"
passed=$(date +%s%N)
wait_jobs 3
echo "   save → first hook output on screen: $(((after - before) / 1000000)) ms (its 50th bar; the screen is polled every 10 ms)"
echo "   save → report on screen (20,160 bars of the bundled data): $(((passed - before) / 1000000)) ms"

echo "4. two quick saves make one run"
passing 4 | save_in_place
sleep 0.02
passing 5 | save_in_place
wait_for "version 5 sees"
wait_jobs 4
# A second run would start within the 75 ms debounce of the last save: a
# quiet second after the fourth job proves there is none.
sleep 1
[ "$(jobs_count)" -eq 4 ] || fail "two quick saves made $(($(jobs_count) - 3)) runs"

echo "5. stratbench jobs lists every run"
listed=$("$work/stratbench" jobs | tail -n +2 | wc -l)
[ "$listed" -eq 4 ] || fail "stratbench jobs lists $listed runs, want 4"

echo "6. ? shows the help"
tmux -L "$sock" send-keys -t e2e '?'
wait_for "Keys · \? or esc closes"
tmux -L "$sock" send-keys -t e2e Escape
wait_gone "Keys · \\? or esc closes"

echo "7. resized to 80x24 it still renders (as tabs)"
tmux -L "$sock" resize-window -t e2e -x 80 -y 24
wait_for "1 Hooks +2 Procs +\[?3 Logs\]?"  # the logs keep the focus a failure did not take
wait_for "PASSED"

echo "8. q quits within a second during a log flood"
cat <<'EOF' | save_in_place
import sys
LINE = "flood " + "x" * 1000 + "\n"


def on_data(ctx, history):
    sys.stdout.write(LINE * 1024)
EOF
tmux -L "$sock" send-keys -t e2e 3
wait_for "flood xxxx"
t0=$(date +%s%N)
tmux -L "$sock" send-keys -t e2e q
wait_for "STRATBENCH-EXITED" 5
t1=$(date +%s%N)
quit_ms=$(((t1 - t0) / 1000000))
echo "   q → exit during the flood: ${quit_ms} ms"
[ "$quit_ms" -le 1000 ] || fail "quit took ${quit_ms} ms"
screen | grep -q "STRATBENCH-EXITED rc=0" || fail "q did not exit with 0"

echo "9. SIGTERM stops the run (on_finish runs), saves it as stopped and exits 143"
cat <<'EOF' | save_in_place
import time


def on_data(ctx, history):
    time.sleep(0.01)


def on_finish(ctx):
    print("on_finish ran")
EOF
session sigterm "cd '$work/strat' && '$work/stratbench' strategy.py; echo STRATBENCH-EXITED rc=\$?; sleep 60"
wait_for "RUNNING"
pkill -TERM -f "^$work/stratbench strategy.py"
wait_for "STRATBENCH-EXITED rc=143" 10
stopped=$("$work/stratbench" jobs --output json | python3 -c 'import json,sys; r=json.load(sys.stdin)[0]; print(r["status"], r["hooks"]["on_finish"]["count"])')
[ "$stopped" = "stopped 1" ] || fail "after SIGTERM the newest job is: $stopped"

# artifacts_step: a job's artifacts listed in the workbench, one opened with
# the opener ($STRATBENCH_OPEN: a script that records its argument). A
# session, a strategy folder and a home of its own.
artifacts_step() {
  echo "10. a lists the job's artifacts; enter opens the selected one with \$STRATBENCH_OPEN"
  local dir="$work/strat-artifacts" home="$work/home-artifacts" opened="$work/opened.txt"
  mkdir -p "$dir"
  printf '%s\n' \
    'def on_data(ctx, history):' \
    '    pass' \
    '' \
    '' \
    'def on_finish(ctx):' \
    '    with open(ctx.artifact_path("report.txt"), "w") as f:' \
    '        f.write("a table the strategy saved\n")' >"$dir/strategy.py"
  printf '#!/bin/sh\nprintf "%%s\\n" "$1" >>"%s"\n' "$opened" >"$work/opener.sh"
  chmod +x "$work/opener.sh"
  session artifacts "cd '$dir' && STRATBENCH_HOME='$home' STRATBENCH_OPEN='$work/opener.sh' '$work/stratbench' strategy.py; echo STRATBENCH-EXITED rc=\$?; sleep 60"
  wait_for "PASSED"
  tmux -L "$sock" send-keys -t e2e a
  wait_for "Artifacts · "
  wait_for "report.txt +27 bytes"
  wait_for "cap 2.00 GiB, 1.00 GiB a file"
  # By name: equity.csv, orders.csv, report.txt, trades.csv.
  tmux -L "$sock" send-keys -t e2e j j
  wait_for "› report.txt"
  wait_for "artifacts/report.txt"
  tmux -L "$sock" send-keys -t e2e Enter
  local deadline=$((SECONDS + 10))
  until grep -q "/artifacts/report.txt$" "$opened" 2>/dev/null; do
    ((SECONDS < deadline)) || fail "the opener was not called with report.txt within 10 s"
    sleep 0.01
  done
  wait_for "› report.txt"
  tmux -L "$sock" send-keys -t e2e Escape
  wait_gone "Artifacts · "
  quit_ok
}
artifacts_step

# ---- The walkthrough's findings (issue 12): each step in a session and a
# STRATBENCH_HOME of its own.

# bars N: a CSV of N one-minute bars of one symbol.
bars() {
  python3 -c '
import sys
n = int(sys.argv[1])
print("timestamp,symbol,open,high,low,close,volume")
for i in range(n):
    p = 100 + (i % 7)
    print(f"{1767225600 + 60 * i},AAA,{p},{p + 1},{p - 1},{p},10")
' "$1"
}
# home_jobs HOME: how many jobs HOME holds.
home_jobs() { STRATBENCH_HOME="$1" "$work/stratbench" jobs --output json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

walk_watch_modules_and_data() {
  echo "walk 1. saving an imported module or the data file re-runs; the header says what is watched"
  local dir="$work/walk1" home="$work/walk1-home"
  mkdir -p "$dir"
  bars 100 >"$dir/bars.csv"
  echo 'def check(n): return n' >"$dir/helpers.py"
  printf 'import helpers\n\n\ndef on_data(ctx, history):\n    helpers.check(len(history))\n' >"$dir/strategy.py"
  session walk1 "cd '$dir' && STRATBENCH_HOME='$home' '$work/stratbench' --data bars.csv strategy.py; echo STRATBENCH-EXITED rc=\$?; sleep 60"
  wait_for "PASSED"
  wait_for "watching \+ 1 module \+ bars.csv"
  # An atomic-rename save of the module, as vim and JetBrains save.
  printf 'def check(n):\n    if n == 10:\n        raise ValueError("helper broke at bar %%d" %% n)\n' >"$dir/helpers.py.tmp"
  mv "$dir/helpers.py.tmp" "$dir/helpers.py"
  wait_for "FAILED"
  wait_for "ValueError: helper broke at bar 10"
  wait_for "ran for helpers.py"
  echo 'def check(n): return n' >"$dir/helpers.py"
  wait_for "PASSED"
  wait_for "passed: 100 events"
  local before after
  before=$(home_jobs "$home")
  bars 150 >"$dir/bars.csv"
  wait_for "ran for bars.csv"
  wait_for "passed: 150 events"
  sleep 1 # a second run would start within the debounce
  after=$(home_jobs "$home")
  [ "$after" -eq $((before + 1)) ] || fail "saving the data file made $((after - before)) runs, want 1"
}

walk_jobs_head_stays_visible() {
  echo "walk 2. with older jobs listed, the newest job (running, then finished) stays in view"
  # Eight older jobs and six new ones: more than the pane's rows, so a
  # selection that stayed on its job would scroll the newest out of view.
  local dir="$work/walk2" home="$work/walk2-home"
  mkdir -p "$dir"
  printf 'def on_data(ctx, history):\n    pass\n' >"$dir/strategy.py"
  for _ in 1 2 3 4 5 6 7 8; do
    STRATBENCH_HOME="$home" "$work/stratbench" --ci --to 2026-01-05T02:00:00Z "$dir/strategy.py" >/dev/null
  done
  session walk2 "cd '$dir' && STRATBENCH_HOME='$home' '$work/stratbench' strategy.py; echo STRATBENCH-EXITED rc=\$?; sleep 60"
  tmux -L "$sock" send-keys -t e2e 6
  local run newest deadline
  for run in 1 2 3 4 5 6; do
    # The run this save started is listed (running, then passed) at the head.
    deadline=$((SECONDS + 30))
    until [ "$(home_jobs "$home")" -ge $((8 + run)) ] || ((SECONDS >= deadline)); do sleep 0.05; done
    newest=$(STRATBENCH_HOME="$home" "$work/stratbench" jobs --output json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["job_id"])')
    wait_for "• $newest"
    wait_for "• $newest +✓ passed"
    echo "# save $run" >>"$dir/strategy.py"
  done
}

walk_hung_hook_and_editor() {
  echo "walk 4. a hung hook shows its running time, then a traceback at the loop's line"
  echo "walk 5. an editor template (STRATBENCH_EDITOR) receives that line"
  local dir="$work/walk4" home="$work/walk4-home"
  mkdir -p "$dir"
  printf 'def on_data(ctx, history):\n    if len(history) == 3:\n        while True:\n            pass\n' >"$dir/strategy.py"
  printf '#!/bin/sh\necho "$@" >"%s"\n' "$work/editor-args" >"$work/fake-editor"
  chmod +x "$work/fake-editor"
  session walk4 "cd '$dir' && STRATBENCH_HOME='$home' STRATBENCH_EDITOR='$work/fake-editor --line {line} {file}' '$work/stratbench' strategy.py; echo STRATBENCH-EXITED rc=\$?; sleep 60"
  tmux -L "$sock" send-keys -t e2e 1
  wait_for "on_data running [0-9.]+m?s / 5s at event #[0-9]+"
  wait_for "FAILED" 15
  wait_for "timeout in on_data"
  tmux -L "$sock" send-keys -t e2e 4
  wait_for "▶ .*strategy.py:[34] in on_data"
  wait_for "e: edit strategy.py:[34]"
  tmux -L "$sock" send-keys -t e2e e
  local deadline=$((SECONDS + 10))
  until [ -s "$work/editor-args" ] || ((SECONDS >= deadline)); do sleep 0.05; done
  grep -Eq -- "^--line [34] $dir/strategy.py$" "$work/editor-args" || fail "the editor got: $(cat "$work/editor-args" 2>/dev/null)"
}

walk_mistyped_command() {
  echo "walk 12. a mistyped command is refused with a suggestion"
  session walk12 "cd '$work' && '$work/stratbench' stauts; echo STRATBENCH-EXITED rc=\$?; sleep 60"
  wait_for 'did you mean "status"'
  wait_for "STRATBENCH-EXITED rc=2"
}

walk_watch_modules_and_data
walk_jobs_head_stays_visible
walk_hung_hook_and_editor
walk_mistyped_command

# The sweep view (`stratbench sweep` without --ci): a sweep starts and
# shows its progress, the heatmap's axes move with keys, enter opens a run's
# job in the usual panes and esc comes back, a save of the strategy stops
# the sweep and starts a new one, q stops the sweep (its runs in flight
# finish on_finish) and quits with 0, leaving no process behind.
sweep_diagnose() {
  echo "----- sweeps -----"
  "$work/stratbench" sweeps || true
  echo "----- the sweeps' runs (job, status, seconds, failure) -----"
  "$work/stratbench" jobs --all --output json | python3 -c '
import json, sys
from datetime import datetime
def t(s): return datetime.fromisoformat(s.replace("Z", "+00:00")) if s else None
for r in json.load(sys.stdin):
    a, b = t(r.get("started_at")), t(r.get("finished_at"))
    took = "%.2f" % (b - a).total_seconds() if a and b else "-"
    f = r.get("failure") or {}
    print(r["job_id"], r.get("status"), took, f.get("kind", ""), (f.get("message") or "")[:100])'
  echo "----- processes -----"
  ps -eo pid,ppid,etime,stat,args --forest | grep -E "stratbench|python" | grep -v grep || true
}
sweep_view() {
  echo "11. the sweep view: progress, heatmap axes, a run's job, a save, q"
  diagnose=sweep_diagnose
  mkdir -p "$work/sweep"
  cp testdata/sweep/sma.py "$work/sweep/sma.py"
  session sweep "cd '$work/sweep' && '$work/stratbench' sweep sma.py --grid fast=2:5:1 --grid slow=10:40:10 --grid fail_at=-1,3 --param slow_ms=2 --from 2026-01-05 --to '2026-01-05 03:00:00' --jobs 2; echo STRATBENCH-EXITED rc=\$?; sleep 60"
  wait_for "RUNNING +[0-9]+/32 runs"
  wait_for "best runs \([1-9]" 60
  wait_for "heatmap: sharpe over fast \(x\) × slow \(y\)"
  # The runs list has a hyperopt table's columns, a swept param each.
  wait_for "SHARPE +RETURN +MAX DD +TRADES +WIN +fast +slow +fail_at"
  tmux -L "$sock" send-keys -t e2e x
  wait_for "heatmap: sharpe over fail_at \(x\) × slow \(y\)" 5
  tmux -L "$sock" send-keys -t e2e w
  wait_for "heatmap: sharpe over slow \(x\) × fail_at \(y\)" 5
  tmux -L "$sock" send-keys -t e2e Enter
  wait_for "stored job [0-9]" 10
  wait_for "5 Results" 5
  tmux -L "$sock" send-keys -t e2e Escape
  wait_for "heatmap: sharpe over slow" 5
  echo "# saved during the sweep" >>"$work/sweep/sma.py"
  wait_for "the strategy changed: the sweep starts again" 30
  tmux -L "$sock" send-keys -t e2e q
  wait_for "STRATBENCH-EXITED rc=[0-9]+" 30
  local status rc want
  status=$("$work/stratbench" sweeps --output json | python3 -c 'import json,sys; print(" ".join(d["status"] for d in json.load(sys.stdin)))')
  case "$status" in "stopped stopped" | "passed stopped" | "failed stopped") ;; *) fail "after a save and q the sweeps are: $status" ;; esac
  # The exit code is the last sweep's: q before it ended stopped it (130,
  # as SIGINT); on a busy machine it may have ended first (0 or 1).
  case "$status" in stopped*) want=130 ;; passed*) want=0 ;; failed*) want=1 ;; esac
  rc=$(screen | grep -Eo "STRATBENCH-EXITED rc=[0-9]+" | head -1 | cut -d= -f2)
  [[ "$rc" == "$want" ]] || fail "after q the last sweep is ${status%% *} but stratbench exited $rc, want $want"
  if pgrep -f "^$work/stratbench sweep" >/dev/null; then fail "a stratbench sweep is still running after q"; fi
  echo "   sweep after q: $status"
  diagnose=""
}
sweep_view

# shown_range: the part of the heatmap's plane on screen ("x 3–25 of 40").
shown_range() { screen | grep -Eo "x [0-9]+–[0-9]+ of [0-9]+" | head -1; }

# view_session NAME [ID]: `stratbench sweep view [ID]` in a session of its
# own, run in sweep_reopen's $dir with its $home.
view_session() {
  session "$1" "cd '$dir' && STRATBENCH_HOME='$home' '$work/stratbench' sweep view ${2:-}; echo STRATBENCH-EXITED rc=\$?; sleep 60"
}
# newest_sweep: the id of the newest sweep in sweep_reopen's $home.
newest_sweep() {
  STRATBENCH_HOME="$home" "$work/stratbench" sweeps --output json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["sweep_id"])'
}

# Reopening sweeps (`stratbench sweep view`), in a home of their own: a
# finished sweep's view with its failed runs' reasons, a heatmap that
# follows the selection, pans and zooms; the list of sweeps; a sweep that
# runs in another stratbench, followed live to its end.
sweep_reopen() {
  echo "12. sweep view ID reopens a finished sweep: the runs' columns, why a run failed, the heatmap follows, pans, zooms"
  diagnose=sweep_diagnose
  local home="$work/home-view" dir="$work/sweep"
  local window=(--from 2026-01-05 --to "2026-01-05 01:00:00")
  STRATBENCH_HOME="$home" "$work/stratbench" sweep "$dir/sma.py" --ci --jobs 2 "${window[@]}" \
    --grid fast=2:5:1 --grid slow=10:40:10 --grid fail_at=-1,3 >/dev/null || true
  local grid wide
  grid=$(newest_sweep)
  view_session reopen "$grid"
  wait_for "FAILED +32/32 runs · 4 failed · took "
  wait_for "SHARPE +RETURN +MAX DD +TRADES +WIN +fast +slow +fail_at"
  # The last run ranked is a failed one: its row says why.
  tmux -L "$sock" send-keys -t e2e G
  wait_for "▸ +15  ✗ exception +ValueError: fast=3 is the combination that fails" 5
  # The heatmap holds the selected run's fail_at, marks its cell, and
  # shows values in its cells.
  wait_for "held at the selected run's \(#15\): fail_at=3" 5
  wait_for "✗ +◂" 5
  wait_for "^│40 .*[0-9]\.[0-9]" 5
  tmux -L "$sock" send-keys -t e2e g
  wait_for "held at the best run's: fail_at=-1" 5
  quit_ok

  # A plane wider than the pane: pan and zoom.
  STRATBENCH_HOME="$home" "$work/stratbench" sweep "$dir/sma.py" --ci --jobs 2 "${window[@]}" \
    --grid fast=1:80:1 --grid slow=10,20 --random 12 --seed 3 >/dev/null || true
  wide=$(newest_sweep)
  view_session reopen-wide "$wide"
  wait_for "HJKL pan • \+/- zoom"
  wait_for "x [0-9]+–[0-9]+ of 80"
  local before
  before=$(shown_range)
  tmux -L "$sock" send-keys -t e2e +
  wait_gone "$before" 5
  local centred
  centred=$(shown_range)
  tmux -L "$sock" send-keys -t e2e L
  wait_gone "$centred" 5
  tmux -L "$sock" send-keys -t e2e c
  wait_for "$centred" 5
  quit_ok

  echo "13. sweep view without an id lists the sweeps: enter opens one, esc comes back, q quits"
  view_session pick
  wait_for "sweeps \(2\) · newest first"
  wait_for "▸ $wide"
  tmux -L "$sock" send-keys -t e2e j
  wait_for "▸ $grid" 5
  tmux -L "$sock" send-keys -t e2e Enter
  wait_for "sweep $grid" 10
  wait_for "esc sweeps" 5
  tmux -L "$sock" send-keys -t e2e Escape
  wait_for "▸ $grid" 10
  quit_ok

  echo "14. sweep view follows a sweep that runs in another stratbench, live, to its end; q leaves it running"
  STRATBENCH_HOME="$home" "$work/stratbench" sweep "$dir/sma.py" --ci --jobs 1 "${window[@]}" \
    --grid fast=2:5:1 --grid slow=10,20 --param slow_ms=10 >"$work/live.out" 2>&1 &
  local live="" pid=$! deadline=$((SECONDS + 30))
  until [ -n "$live" ] || ((SECONDS >= deadline)); do
    live=$(STRATBENCH_HOME="$home" "$work/stratbench" sweeps --output json | python3 -c '
import json, sys
print(next((d["sweep_id"] for d in json.load(sys.stdin) if d["status"] == "running"), ""))')
    sleep 0.05
  done
  [ -n "$live" ] || fail "the background sweep did not start within 30 s"
  view_session live "$live"
  wait_for "RUNNING +[0-7]/8 runs .*watching: q leaves it running" 20
  local count
  count=$(screen | grep -Eo "[0-9]/8 runs" | head -1)
  wait_gone "RUNNING +$count" 30 # a result appended in the other stratbench appears
  quit_ok
  # Opened again, the view follows the sweep to its end.
  view_session live-end "$live"
  wait_for "PASSED +8/8 runs" 60
  quit_ok
  # q left it running: it ran to its end.
  wait "$pid" || fail "the background sweep exited $?: $(cat "$work/live.out")"
  diagnose=""
}
sweep_reopen

# The debugger (docs/workbench.md, "The debug pane"): breakpoint() in
# on_data at bar 100 stops the run at a prompt within a second of the
# save; p, n and c do what pdb does; held at the prompt 10 s, twice the
# 5 s limit of on_data, the run still passes, with the orders of the same
# strategy without breakpoint(). Then b in the source view sets a
# breakpoint with a condition, and r stops only where it holds.
# debug_version BREAK: the strategy, with breakpoint() at bar 100 when
# BREAK is 1 (the same lines either way: a stop is at line 7).
debug_version() {
  local call="pass"
  [ "$1" = 1 ] && call="breakpoint()"
  printf '%s\n' \
    'MANIFEST = {"history": 500}' \
    '' \
    '' \
    'def on_data(ctx, history):' \
    '    if len(history) == 100:' \
    "        $call" \
    '    step = len(history) % 50' \
    '    if step == 0:' \
    '        ctx.buy(ctx.symbol, 1)'
}
debug_step() {
  echo "15. breakpoint() stops at a prompt (p, n, c), the time held is not charged; b with a condition"
  local dir="$work/debug" home="$work/debug-home"
  mkdir -p "$dir"
  bars 300 >"$dir/bars.csv"
  debug_version 0 >"$dir/strategy.py"
  local plain
  plain=$(STRATBENCH_HOME="$work/debug-ci" "$work/stratbench" --ci --output json --data "$dir/bars.csv" "$dir/strategy.py" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["orders_hash"])')
  session debug "cd '$dir' && STRATBENCH_HOME='$home' '$work/stratbench' --data bars.csv strategy.py; echo STRATBENCH-EXITED rc=\$?; sleep 60"
  wait_for "PASSED"
  local before after stop_ms
  before=$(date +%s%N)
  debug_version 1 >"$dir/strategy.py"
  wait_for "Debugger · stopped at strategy.py:7 in on_data · on_data at event #99"
  after=$(date +%s%N)
  stop_ms=$(((after - before) / 1000000))
  echo "   save → stopped at the prompt (bar 100): ${stop_ms} ms"
  ((stop_ms <= 1000)) || fail "the stop took ${stop_ms} ms after the save"
  wait_for "DEBUGGING"
  wait_for "history = <history 100 bars>"
  tmux -L "$sock" send-keys -t e2e -l 'p len(history)'
  tmux -L "$sock" send-keys -t e2e Enter
  wait_for "┃100 +┃"
  wait_for "\(Pdb\) ▏"
  sleep 10 # the deliberate hold: twice on_data's 5 s limit, at the prompt
  tmux -L "$sock" send-keys -t e2e n Enter
  wait_for "stopped at strategy.py:8 in on_data"
  wait_for "→ 8 │     if step == 0:"
  tmux -L "$sock" send-keys -t e2e c Enter
  wait_for "PASSED" 30
  local got status hash max_ms
  got=$(STRATBENCH_HOME="$home" "$work/stratbench" jobs --output json | python3 -c '
import json, sys
r = json.load(sys.stdin)[0]
print(r["status"], r["orders_hash"], "%.0f" % r["hooks"]["on_data"]["max_ms"])')
  read -r status hash max_ms <<<"$got"
  [ "$status" = passed ] || fail "the run held at the prompt is $status"
  [ "$hash" = "$plain" ] || fail "orders hash $hash with the stop, $plain without breakpoint()"
  ((max_ms < 5000)) || fail "on_data's slowest call was charged ${max_ms} ms: the time at the prompt counted"
  echo "   held 10 s at the prompt: passed, on_data's slowest call ${max_ms} ms, the orders hash unchanged"

  # b in the source view, on line 7, with a condition; r runs with it.
  debug_version 0 >"$dir/strategy.py"
  wait_jobs_in "$home" 3
  wait_for "PASSED"
  tmux -L "$sock" send-keys -t e2e v
  wait_for "Source · strategy.py"
  wait_for "line 1 of 9"
  tmux -L "$sock" send-keys -t e2e j j j j j j
  wait_for "line 7 of 9"
  tmux -L "$sock" send-keys -t e2e b
  wait_for "condition \(a Python expression"
  tmux -L "$sock" send-keys -t e2e -l 'len(history) == 150'
  tmux -L "$sock" send-keys -t e2e Enter
  wait_for "● strategy.py:7 if len\(history\) == 150"
  wait_for "●› 7 │     step = len\(history\) % 50"
  tmux -L "$sock" send-keys -t e2e Escape
  wait_gone "Source · strategy.py"
  tmux -L "$sock" send-keys -t e2e r
  wait_for "Debugger · stopped at strategy.py:7 in on_data · on_data at event #149"
  tmux -L "$sock" send-keys -t e2e -l 'p len(history)'
  tmux -L "$sock" send-keys -t e2e Enter
  wait_for "┃150 +┃"
  tmux -L "$sock" send-keys -t e2e c Enter
  wait_for "PASSED" 30
  wait_gone "DEBUGGING"
  quit_ok
}
# wait_jobs_in HOME N: until HOME holds N finished jobs.
wait_jobs_in() {
  local deadline=$((SECONDS + 30)) n
  while ((SECONDS < deadline)); do
    n=$(STRATBENCH_HOME="$1" "$work/stratbench" jobs --output json | python3 -c 'import json,sys; print(len([r for r in json.load(sys.stdin) if r["status"] != "running"]))')
    if [ "$n" -ge "$2" ]; then return 0; fi
    sleep 0.1
  done
  fail "expected $2 finished jobs in $1 within 30 s"
}
debug_step

# The second walkthrough's findings (issue 37) the workbench shows: each
# job's params in the Jobs pane, and a mistyped STRATEGY, which asks
# (offering the nearest .py file) instead of waiting for it forever.
walk2_step() {
  echo "16. the Jobs pane lists each job's params; a mistyped STRATEGY asks, offering the nearest .py"
  local home="$work/home-walk2" dir="$work/walk2"
  local window=(--from 2026-01-05 --to "2026-01-05 01:00:00")
  mkdir -p "$dir"
  cp testdata/sweep/sma.py "$dir/sma.py"
  for fast in 3 4; do
    STRATBENCH_HOME="$home" "$work/stratbench" --ci "$dir/sma.py" "${window[@]}" --param fast=$fast >/dev/null
  done
  session jobs-params "cd '$dir' && STRATBENCH_HOME='$home' '$work/stratbench' sma.py ${window[*]@Q}; echo STRATBENCH-EXITED rc=\$?; sleep 60"
  wait_for "PASSED" 30
  tmux -L "$sock" send-keys -t e2e 6
  wait_for "fast=3 " 10
  wait_for "fast=4 " 10
  quit_ok
  session mistyped "cd '$dir' && STRATBENCH_HOME='$home' '$work/stratbench' smaa.py; echo STRATBENCH-EXITED rc=\$?; sleep 60"
  wait_for "No strategy smaa.py here. Open sma.py instead" 10
  tmux -L "$sock" send-keys -t e2e q Enter
  wait_for "STRATBENCH-EXITED rc=2" 10
  session mistyped-open "cd '$dir' && STRATBENCH_HOME='$home' '$work/stratbench' smaa.py; echo STRATBENCH-EXITED rc=\$?; sleep 60"
  wait_for "Open sma.py instead" 10
  tmux -L "$sock" send-keys -t e2e Enter
  wait_for "PASSED" 30
  quit_ok
}
walk2_step

echo "e2e-tui: ok"
