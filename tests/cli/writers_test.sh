#!/usr/bin/env bash
# What every writer (here `code -o`, `stamp -o`, `validate --no-load -o`)
# does with special targets (hostile corpus, folder 17): a FIFO and a device
# node are written into and stay what they are; a symlink stays a link and
# its target is replaced; /proc/self/fd/N (a pipe) is written into; a
# directory is refused in one line with exit 3. Device nodes need root
# (mknod); without it that part is skipped.
#   writers_test.sh TSCTL TESTDATA_DIR
set -u
tsctl=$1 testdata=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
a="$testdata/with_extra.pt"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
type_of() { stat -c %F "$1"; }

for w in "code -o" "stamp --no-auto --set k=1 -o" "validate --no-load -o"; do
  # A FIFO: written into, stays a FIFO.
  mkfifo "$d/fifo"
  cat "$d/fifo" >"$d/fifo.out" &
  reader=$!
  $tsctl $w "$d/fifo" "$a" >/dev/null 2>"$d/err" || fail "$w FIFO: exit $? $(cat "$d/err")"
  wait $reader
  [ "$(type_of "$d/fifo")" = fifo ] || fail "$w: the FIFO became a $(type_of "$d/fifo")"
  [ -s "$d/fifo.out" ] || fail "$w: nothing came through the FIFO"
  rm -f "$d/fifo" "$d/fifo.out"

  # A symlink into another folder: the link stays, its target is replaced.
  mkdir -p "$d/real"
  echo old >"$d/real/target"
  ln -s real/target "$d/link"
  $tsctl $w "$d/link" "$a" >/dev/null 2>"$d/err" || fail "$w symlink: exit $? $(cat "$d/err")"
  [ -L "$d/link" ] || fail "$w: the symlink was replaced"
  echo old | cmp -s - "$d/real/target" && fail "$w: the link's target was not written"
  [ -z "$(ls "$d" | grep tsctl-tmp)$(ls "$d/real" | grep tsctl-tmp)" ] || fail "$w: a temporary file was left"
  rm -rf "$d/link" "$d/real"

  # A dangling symlink: the target is created beside where it points.
  mkdir -p "$d/real"
  ln -s real/new "$d/dangling"
  $tsctl $w "$d/dangling" "$a" >/dev/null 2>"$d/err" || fail "$w dangling symlink: exit $? $(cat "$d/err")"
  [ -L "$d/dangling" ] && [ -s "$d/real/new" ] || fail "$w: a dangling link's target was not created"
  rm -rf "$d/dangling" "$d/real"

  # A directory: refused in one line, exit 3.
  mkdir "$d/dir"
  $tsctl $w "$d/dir" "$a" >/dev/null 2>"$d/err"
  rc=$?
  [ $rc = 3 ] && [ "$(wc -l <"$d/err")" = 1 ] && grep -q "Is a directory" "$d/err" ||
    fail "$w directory: exit $rc, stderr: $(cat "$d/err")"
  [ -z "$(ls -A "$d/dir")" ] || fail "$w: wrote into the directory"
  rmdir "$d/dir"

  # A pipe through /proc/self/fd/N.
  out=$($tsctl $w /proc/self/fd/3 "$a" 3>&1 >/dev/null 2>"$d/err" | wc -c)
  [ "$out" -gt 0 ] || fail "$w /proc/self/fd/3: nothing written ($(cat "$d/err"))"

  # A character device node (root only): written into, stays a device.
  if mknod "$d/nulldev" c 1 3 2>/dev/null; then
    $tsctl $w "$d/nulldev" "$a" >/dev/null 2>"$d/err" || fail "$w device: exit $? $(cat "$d/err")"
    [ "$(type_of "$d/nulldev")" = "character special file" ] || fail "$w: the device became a $(type_of "$d/nulldev")"
    rm -f "$d/nulldev"
  fi
done
echo "$failures failures"
[ $failures = 0 ]
