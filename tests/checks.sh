#!/usr/bin/env bash
# Sourced by the end-to-end shell tests (tests/*_test.sh): a temporary folder
# $tmp removed on exit, `check NAME CONDITION...` counting passes and
# failures, `expect_error NAME PATTERN ARGS...` for a tool's bad input, and
# `report` as the last line (the script's exit status).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $name"
  fi
}

# Runs "$tool" with ARGS expecting exit 1 and a message on stderr matching
# PATTERN: fails NAME unless both.
expect_error() {  # expect_error NAME PATTERN ARGS...
  local name=$1 pattern=$2
  shift 2
  "$tool" "$@" >/dev/null 2>"$tmp/err"
  local rc=$?
  check "$name: exit 1 (got $rc)" test $rc -eq 1
  check "$name: says '$pattern'" grep -q -- "$pattern" "$tmp/err"
}

# Prints "[NAME: ]N passed, M failed"; succeeds when none failed.
report() {  # report [NAME]
  echo "${1:+$1: }$passed passed, $failed failed"
  test "$failed" -eq 0
}
