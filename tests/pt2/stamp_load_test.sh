#!/usr/bin/env bash
# stamp on a .pt2, read back by torch.export.load(path, extra_files=...) of
# the pinned torch 2.x: a record added with --file and the producer record
# from --set, and one replaced (cnn.pt2's extra/producer.json). Also checks
# that the stamped archive still loads and its program runs as before.
#
#   stamp_load_test.sh TSCTL REPO_ROOT
#
# Needs a Python with torch >= 2.9 (torch.export.load with extra_files):
# $TSCTL_TORCH2_PYTHON, else REPO_ROOT/.venv-torch2/bin/python (made by
# scripts/install_torch2.sh). Without one it exits 77: skipped, not passed.
set -u
tsctl=$1
root=$2
py=${TSCTL_TORCH2_PYTHON:-$root/.venv-torch2/bin/python}
if ! "$py" -c 'import torch, sys; sys.exit(0 if hasattr(torch.export, "load") and int(torch.__version__.split(".")[1]) >= 9 else 1)' 2>/dev/null; then
  echo "no torch >= 2.9 at $py (set TSCTL_TORCH2_PYTHON): skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$root/testdata/pt2/cnn.pt2" "$tmp/cnn.pt2"
chmod u+w "$tmp/cnn.pt2"
printf 'line one\nline two\n' >"$tmp/notes.txt"
"$tsctl" stamp "$tmp/cnn.pt2" --no-auto --set team=ml --set run.id=7 --file notes.txt="$tmp/notes.txt" \
  --file producer.json="$tmp/notes.txt" >/dev/null || { echo "FAIL: stamp exited $?"; exit 1; }
"$py" - "$tmp/cnn.pt2" "$root/testdata/pt2/cnn.pt2" <<'PY' 2>&1 | grep -v Warning
import json, sys, torch
stamped, original = sys.argv[1], sys.argv[2]
extra = {"producer_info.json": "", "notes.txt": "", "producer.json": ""}
ep = torch.export.load(stamped, extra_files=extra)
assert json.loads(extra["producer_info.json"]) == {"team": "ml", "run": {"id": 7}}, extra["producer_info.json"]
assert extra["notes.txt"] == "line one\nline two\n", repr(extra["notes.txt"])
assert extra["producer.json"] == "line one\nline two\n", repr(extra["producer.json"])
x = torch.randn(1, 3, 8, 8)
want = torch.export.load(original).module()(x)
got = ep.module()(x)
assert torch.equal(want, got), "outputs differ after stamp"
print("PASS: torch.export.load read 3 stamped extra/ records; outputs unchanged")
PY
status=${PIPESTATUS[0]}
[ "$status" = 0 ] || { echo "FAIL: torch.export.load check exited $status"; exit 1; }
