#!/usr/bin/env bash
# How far the TorchScript archives of ../shared/corpus get on their way to
# .pt2 (tsctl migrate, issue #38's measure): every archive once, in one
# zoo run of the LibTorch 2.x build, then the stage table and the blockers
# ranked by how many archives they stop, and the JSON report kept.
#
#   scripts/migrate_corpus.sh [TSCTL] [CORPUS_DIR] [OUT_DIR]
#
# TSCTL defaults to build-torch2/bin/tsctl (scripts/build_torch2.sh). Inputs:
# what each archive keeps, else inferred by a LibTorch child, as validate.
set -u
cd "$(dirname "$0")/.."
tsctl=${1:-build-torch2/bin/tsctl}
corpus=${2:-../shared/corpus}
out=${3:-$(mktemp -d)}
[ -x "$tsctl" ] || { echo "migrate_corpus: no $tsctl (build it with scripts/build_torch2.sh)" >&2; exit 2; }
mkdir -p "$out/pt2"
shopt -s nullglob
archives=()
for f in "$corpus"/*.pt "$corpus"/*.pth "$corpus"/*.jit "$corpus"/*.ptl "$corpus"/*.torchscript; do
  archives+=("$f")
done
echo "migrate_corpus: ${#archives[@]} archives of $corpus, programs into $out/pt2" >&2
start=$SECONDS
"$tsctl" migrate "${archives[@]}" --out-dir "$out/pt2" --timeout 120 --json >"$out/migrate.json" 2>"$out/stderr.txt"
echo "migrate_corpus: exit $?, $((SECONDS - start)) s; report $out/migrate.json, error lines $out/stderr.txt" >&2
/usr/bin/python3 - "$out/migrate.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
s = doc["summary"]
print("%d archives" % s["archives"])
for k, n in s["reached"].items():
    print("  %-18s %d" % (k, n))
print("blockers (archives stopped):")
for b in s["blockers"]:
    print("  %-40s %d" % (b["kind"], b["models"]))
unknown = [r["path"] for r in doc["results"] if r["stage"] != "packaged" and not r["blockers"]]
print("without a blocker: %d" % len(unknown))
PY
