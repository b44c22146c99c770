#!/usr/bin/env bash
# Audit cases (issue 13) that need a scratch file, a stream or an argument
# with a space, so cannot be golden cases: standard input, pipes and FIFOs
# (item 17), validate --record-reference on a read-only archive (item 2),
# script --class with a space (item 15), inputs recorded in an archive
# (issue 24, findings 2 and 10).
#   audit_test.sh TSCTL   (run from the repository root)
set -u
tsctl=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok    $1"; }
bad() { echo "FAIL  $1"; fail=1; }
expect() {  # NAME WANT_EXIT GOT_EXIT STDERR_FILE PATTERN
  if [ "$3" = "$2" ] && grep -q -- "$5" "$4"; then ok "$1"; else bad "$1 (exit $3, want $2; stderr: $(head -c 300 "$4"))"; fi
}
a=testdata/traced_cnn.pt

# '-' and process substitution read the stream.
"$tsctl" inspect - <"$a" >"$tmp/out" 2>"$tmp/err"; rc=$?
expect "inspect - reads standard input" 0 $rc "$tmp/out" "^kind  *torchscript"
"$tsctl" inspect <(cat "$a") >"$tmp/out" 2>"$tmp/err"; rc=$?
expect "inspect <(cat x.pt) reads the pipe" 0 $rc "$tmp/out" "^kind  *torchscript"
cat "$a" | "$tsctl" validate --no-load - >"$tmp/out" 2>"$tmp/err"; rc=$?
expect "validate --no-load - reads a pipe" 0 $rc "$tmp/out" "result: PASSED"
cat "$a" | "$tsctl" diff "$a" - >"$tmp/out" 2>"$tmp/err"; rc=$?
expect "diff FILE - compares with standard input" 0 $rc "$tmp/out" ""

# A FIFO that nobody writes to: one line after the wait, never a hang.
mkfifo "$tmp/fifo"
start=$SECONDS
timeout 60 "$tsctl" inspect "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"; rc=$?
expect "a FIFO without a writer is an I/O error, not a hang ($((SECONDS - start)) s)" 3 $rc "$tmp/err" "nothing to read within"
[ "$(wc -l <"$tmp/err")" = 1 ] && ok "  ... in one line" || bad "  ... in one line"
# A FIFO with a writer.
(cat "$a" >"$tmp/fifo") &
"$tsctl" inspect "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"; rc=$?
wait
expect "a FIFO with a writer is read" 0 $rc "$tmp/out" "^kind  *torchscript"

# What must be a regular file says so in one line, and nothing is written.
cp "$a" "$tmp/h.pt"
cat "$tmp/h.pt" | "$tsctl" stamp --set a=1 - >"$tmp/out" 2>"$tmp/err"; rc=$?
expect "stamp refuses standard input" 2 $rc "$tmp/err" "stamp reads and writes archives from a regular file"
if "$tsctl" --version | grep -q '^libtorch [0-9]'; then
  cat "$a" | "$tsctl" graph - >"$tmp/out" 2>"$tmp/err"; rc=$?
  expect "graph refuses standard input" 2 $rc "$tmp/err" "LibTorch loads archives from a regular file"
  cat "$a" | "$tsctl" validate - >"$tmp/out" 2>"$tmp/err"; rc=$?
  expect "validate (loading) refuses standard input, naming --no-load" 2 $rc "$tmp/err" "or pass --no-load"

  # --record-reference on a read-only archive: a FAIL finding in a printed
  # report, advice that fits validate, the archive unchanged.
  cp "$a" "$tmp/ro.pt"
  chmod 0444 "$tmp/ro.pt"
  "$tsctl" validate --record-reference "$tmp/ro.pt" >"$tmp/out" 2>"$tmp/err"; rc=$?
  expect "record-reference on a read-only archive is a FAIL in the report" 1 $rc "$tmp/out" "FAIL  torch.reference.*read-only.*--save-reference"
  grep -q "use --output" "$tmp/out" "$tmp/err" && bad "  ... without stamp's --output advice" || ok "  ... without stamp's --output advice"
  cmp -s "$a" "$tmp/ro.pt" && ok "  ... and the archive is unchanged" || bad "  ... and the archive is unchanged"

  # A full-JIT archive named .ptl: the lite interpreter cannot load it, said
  # once, by ts.mobile (the child does not try it again for "file not found").
  cp testdata/with_extra.pt "$tmp/full.ptl"
  "$tsctl" validate --input 1x4 "$tmp/full.ptl" >"$tmp/out" 2>"$tmp/err"; rc=$?
  expect "a .ptl without bytecode.pkl: ts.mobile FAIL" 1 $rc "$tmp/out" "FAIL  ts.mobile .*no bytecode.pkl"
  grep -q "torch.mobile" "$tmp/out" && bad "  ... reported twice: $(grep mobile "$tmp/out")" || ok "  ... and only once"

  # --reference-model B runs B on the inputs A recorded (issue 24, finding 2):
  # "stored in A, else stored in B", never fresh random inputs.
  cp "$a" "$tmp/recorded.pt"
  "$tsctl" validate --record-reference --input 2x3x16x16 "$tmp/recorded.pt" >"$tmp/out" 2>"$tmp/err"; rc=$?
  expect "record-reference stores the inputs" 0 $rc "$tmp/out" "PASS  torch.reference .*recorded inputs and outputs"
  "$tsctl" validate --reference-model "$a" "$tmp/recorded.pt" >"$tmp/out" 2>"$tmp/err"; rc=$?
  expect "--reference-model runs both on A's recorded inputs" 0 $rc "$tmp/out" "PASS  torch.reference .*against reference model"
  grep -q "Float\[2, 3, 16, 16\]" "$tmp/out" && ok "  ... of A's shape, 2x3x16x16" || bad "  ... of A's shape: $(grep torch.run "$tmp/out")"
  # A alone: compared with its own record inside the sandbox (the child reads
  # it from memory; through a temporary file it was a torch.sandbox FAIL),
  # and the report says where the recorded inputs came from.
  "$tsctl" validate "$tmp/recorded.pt" >"$tmp/out" 2>"$tmp/err"; rc=$?
  expect "a recorded reference is compared on a later run" 0 $rc "$tmp/out" "PASS  torch.reference .*against extra/tsctl_reference.pt"
  grep -q "inputs from extra/tsctl_reference.pt, recorded on inputs from --input" "$tmp/out" && ok "  ... naming the inputs' origin, --input" || bad "  ... naming the inputs' origin: $(grep torch.run "$tmp/out")"
  cp "$a" "$tmp/guessed.pt"
  "$tsctl" validate --record-reference "$tmp/guessed.pt" >"$tmp/out" 2>"$tmp/err"
  "$tsctl" validate "$tmp/guessed.pt" >"$tmp/out" 2>"$tmp/err"; rc=$?
  expect "a reference recorded on inferred inputs says so later" 0 $rc "$tmp/out" "recorded on inferred inputs (a guess, not the model's own)"

  # bench runs on the values a recorded reference holds, of any type, as
  # validate does (issue 24, finding 10), not on specs or fresh guesses.
  cp testdata/args/all_args.pt "$tmp/all_args.pt"
  "$tsctl" validate --record-reference --load-inputs testdata/args/all_args.inputs.pt "$tmp/all_args.pt" >"$tmp/out" 2>"$tmp/err"; rc=$?
  expect "record-reference stores arguments of every type" 0 $rc "$tmp/out" "PASS  torch.reference .*recorded inputs and outputs"
  "$tsctl" bench --iters 2 --warmup 1 "$tmp/all_args.pt" >"$tmp/out" 2>"$tmp/err"; rc=$?
  expect "bench takes the recorded reference's inputs" 0 $rc "$tmp/out" "from extra/tsctl_reference.pt"

  # A class name with a space, or empty: a usage error, nothing written.
  for name in 'Bad Name' ''; do
    "$tsctl" script testdata/models/net.ts --class "$name" -o "$tmp/bad.pt" >"$tmp/out" 2>"$tmp/err"; rc=$?
    expect "script --class '$name' is a usage error" 2 $rc "$tmp/err" "is not a class name"
    [ ! -e "$tmp/bad.pt" ] && ok "  ... and nothing is written" || bad "  ... and nothing is written"
  done
fi
exit $fail
