# Errors in bird's log, the patched bird's against stock's, phase by phase
# (sourced by tests/e2e/e2e.sh and tests/check/krt-*.sh). A phase of a log is
# what it got since errlog_mark; a log that a restart of bird truncates is
# read together with FILE.old, where the starter keeps the runs before
# (rig_bird in rig.sh, run_bird in krt-faults.sh), so marks stay valid.
#
#   errlog_mark LOG...          remember where each LOG ends now
#   errlog_since LOG            <ERR> messages of LOG since its mark: the
#                               timestamp cut off, sorted, each once
#   errlog_extra MINE THEIRS [ALLOW]
#                               lines of file MINE that file THEIRS lacks and
#                               the extended regex ALLOW (expected) does not match
#   errlog_new OUT P_LOG S_LOG [ALLOW]
#                               errlog_extra of the two logs' phases into file
#                               OUT, then both logs marked: OUT is empty when
#                               the patched bird logged no error that stock did
#                               not log in the same phase (not in a $(...):
#                               the marks would stay in the subshell)
declare -gA ERRLOG_MARK

errlog_cat() { cat "$1.old" "$1" 2>/dev/null; }
errlog_mark() { local f; for f; do ERRLOG_MARK[$f]=$(errlog_cat "$f" | wc -l); done; }
errlog_since() {
  errlog_cat "$1" | tail -n +$(( ${ERRLOG_MARK[$1]:-0} + 1 )) |
    sed -nE 's/^.*(<ERR> .*)$/\1/p' | LC_ALL=C sort -u
}
errlog_extra() {
  LC_ALL=C comm -23 "$1" "$2" | { if [ -n "${3:-}" ]; then grep -vE -- "$3"; else cat; fi; } || true
}
errlog_new() {
  local out=$1 p=$2 s=$3 allow=${4:-}
  errlog_since "$p" > "$out.p"; errlog_since "$s" > "$out.s"
  errlog_extra "$out.p" "$out.s" "$allow" > "$out"
  rm -f "$out.p" "$out.s"
  errlog_mark "$p" "$s"
}
