#!/usr/bin/env bash
# Runs one CLI test case: CASE.cmd holds the arguments to tsctl (one line,
# word-split by bash, run from the repository root). The case passes when
# stdout, stderr and the exit code equal CASE.stdout, CASE.stderr, CASE.exit
# (a missing expectation file means "empty" / 0). CASE.env may hold VAR=value
# lines set for that run.
#
#   run_case.sh TSCTL CASE.cmd                 check
#   run_case.sh TSCTL CASE.cmd --set-exact-output   rewrite the expectations
set -u
tsctl=$1
case_file=$2
mode=${3:-check}
base=${case_file%.cmd}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

read -r -a args < "$case_file"
# CASE.env, if present: VAR=value lines exported for this case only.
env_args=()
if [ -f "$base.env" ]; then mapfile -t env_args < "$base.env"; fi
env "${env_args[@]}" "$tsctl" "${args[@]}" </dev/null >"$out/stdout" 2>"$out/stderr"
echo $? >"$out/exit"
# Timings differ from run to run: JUnit's time="0.012" attributes are
# compared as time="T" (docs/manual/testing.md).
sed -i -E 's/ time="[0-9]+\.[0-9]{3}"/ time="T"/g' "$out/stdout"
# The sandbox's layers differ from kernel to kernel: JSON's "sandbox"
# object is compared as {SANDBOX}, a Landlock ABI in text as N.
sed -i -E 's/"sandbox": ?\{[^}]*\}/"sandbox":{SANDBOX}/g; s/Landlock ABI [0-9]+/Landlock ABI N/g' "$out/stdout" "$out/stderr"

if [ "$mode" = "--set-exact-output" ]; then
  for k in stdout stderr exit; do
    if [ -s "$out/$k" ] && ! { [ $k = exit ] && [ "$(cat "$out/exit")" = 0 ]; }; then
      cp "$out/$k" "$base.$k"
    else
      rm -f "$base.$k"
    fi
  done
  exit 0
fi

# A build without LibTorch (TSCTL_TEST_NO_TORCH=1): a case that needs LibTorch
# (or the Python plugin, which needs it) gets tsctl's "built without LibTorch"
# ("built without Python support") error; report it skipped (ctest's
# SKIP_RETURN_CODE 77) unless that error is what the case expects.
missing='built without \(LibTorch\|Python support\)'
if [ -n "${TSCTL_TEST_NO_TORCH:-}" ] && grep -q "$missing" "$out/stderr" "$out/stdout" &&
   ! grep -qs "$missing" "$base.stderr" "$base.stdout"; then
  echo "SKIPPED: needs LibTorch: tsctl ${args[*]}"
  exit 77
fi

status=0
for k in stdout stderr exit; do
  expected="$base.$k"
  if [ -f "$expected" ]; then
    want="$expected"
  else
    want="$out/empty.$k"
    if [ $k = exit ]; then echo 0 >"$want"; else : >"$want"; fi
  fi
  # An alternative expectation (CASE.K.alt-WHY) covers a known difference
  # between LibTorch versions, e.g. 2.x printing one more argument.
  matched=0
  for alt in "$want" "$expected".alt-*; do
    [ -f "$alt" ] && cmp -s "$alt" "$out/$k" && matched=1
  done
  if [ $matched = 0 ]; then
    echo "FAIL: $k differs for tsctl ${args[*]}"
    diff -u "$want" "$out/$k" | head -40
    status=1
  fi
done
exit $status
