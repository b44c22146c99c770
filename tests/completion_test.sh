#!/usr/bin/env bash
# The generated completion (build/completions) knows every subcommand and every
# flag that tsctl --help lists, completes them in a real bash, offers the
# choices of a --format, and the zsh file names the same flags (and parses,
# where zsh is installed).
#   completion_test.sh TSCTL COMPLETION_DIR
set -u
tsctl=$1 dir=$2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# shellcheck disable=SC1091
source "$dir/tsctl.bash" || { echo "FAIL: cannot source $dir/tsctl.bash"; exit 1; }
complete_words() {  # complete_words WORD... -> what bash would offer for the last one
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMPREPLY=()
  _tsctl
  printf '%s\n' "${COMPREPLY[@]}"
}
# Flags of an Options: section of --help, as CLI11 prints them.
flags_of() {
  awk '/^[A-Za-z].*:$/ {section=$0; next} section=="Options:" && /^  -/ {print $1}' | sed 's/{[^}]*}//' | tr ',' '\n' | grep '^-'
}

commands=$("$tsctl" --help | awk '/^Subcommands:$/ {s=1; next} /^[^ ]/ {s=0} s && /^  [a-z]/ {print $1}')
[ -n "$commands" ] || fail "tsctl --help lists no subcommands"
offered=$(complete_words tsctl '')
for c in $commands; do
  grep -qx "$c" <<<"$offered" || fail "bash does not offer subcommand $c"
  grep -q "^ *'$c:" "$dir/_tsctl" || fail "zsh does not list subcommand $c"
  offered_flags=$(complete_words tsctl "$c" -)
  for f in $("$tsctl" "$c" --help | flags_of); do
    grep -qx -- "$f" <<<"$offered_flags" || fail "bash does not offer $c $f"
    grep -q -- "$f" <(sed -n "/^        $c) _arguments/,/;;/p" "$dir/_tsctl") || fail "zsh does not offer $c $f"
  done
done
for f in $("$tsctl" --help | flags_of); do
  grep -qx -- "$f" <<<"$(complete_words tsctl -)" || fail "bash does not offer tsctl $f"
done
# A flag with a fixed set of values offers exactly those.
[ "$(complete_words tsctl validate --format j | sort | tr '\n' ' ')" = "json junit " ] ||
  fail "validate --format j does not offer json junit"
grep -qx inspect <<<"$(complete_words tsctl ins)" || fail "tsctl ins does not complete to inspect"
if command -v zsh >/dev/null; then zsh -n "$dir/_tsctl" || fail "zsh cannot parse _tsctl"; fi
echo "$(wc -w <<<"$commands") subcommands checked, $failures failures"
[ $failures = 0 ]
