#!/usr/bin/env bash
# tsctl migrate end to end on the LibTorch 2.x build: TorchScript archives
# saved by the pinned torch (testdata/models/migrate_models.py) converted to
# .pt2; what tsctl calls verified is checked again independently in Python
# (torch.export.load against torch.jit.load, on the sample and on another
# size of every dimension the program claims dynamic); the loop is blocked
# with its node and source line; a model whose outputs differ is not
# written (and with --keep-unverified is, marked); a zoo gets its summary.
#
#   migrate_test.sh TSCTL REPO_ROOT
#
# Needs tsctl built against LibTorch 2.x with the Python embedding and a
# Python with that torch ($TSCTL_TORCH2_PYTHON, else REPO_ROOT/.venv-torch2/bin/python)
# that has the converter. Without them it exits 77: skipped, not passed.
set -u
tsctl=$1
root=$2
py=${TSCTL_TORCH2_PYTHON:-$root/.venv-torch2/bin/python}
version=$("$tsctl" --version 2>/dev/null)
grep -q '^libtorch 2\.' <<<"$version" || { echo "tsctl is not built against LibTorch 2.x: skipped"; exit 77; }
grep -q 'embedding built in' <<<"$version" || { echo "tsctl is built without the Python embedding: skipped"; exit 77; }
"$py" -c 'from torch._export.converter import TS2EPConverter' 2>/dev/null ||
  { echo "no TS2EPConverter at $py (set TSCTL_TORCH2_PYTHON): skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/tmpdir" "$tmp/zoo"
export TMPDIR=$tmp/tmpdir
fail=0
bad() { echo "FAIL: $*"; fail=1; }
expect() {  # expect STATUS CMD...: output in $tmp/out, $tmp/err
  local want=$1; shift
  "$tsctl" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  [ "$got" = "$want" ] || bad "tsctl $* exited $got, not $want: $(head -c 900 "$tmp/out" "$tmp/err")"
}
has() { grep -q -- "$1" "$tmp/out" || bad "no '$1' in the output of the last command: $(head -c 900 "$tmp/out")"; }
"$py" "$root/testdata/models/migrate_models.py" "$tmp/zoo" 2>/dev/null || { bad "cannot save the models"; exit 1; }
z=$tmp/zoo

# A traced CNN with stored inputs: converted, verified on the sample and on
# the sizes the program claims dynamic, written with its provenance.
expect 0 migrate "$z/cnn.pt" -o "$tmp/cnn.pt2"
has ': packaged'
has 'inputs    1x3x8x8:float32 (extra/tsctl_inputs.json)'
has 'checks    sample (1x3x8x8): matched'
has 'shape\[2\]=9'
# The sample's specs travel with the program, for a later validate.
expect 0 inspect "$tmp/cnn.pt2"
has 'extra/tsctl_inputs.json'
# tsctl diff across the formats: the same parameters by name, dtype, shape
# and values; one weight changed in the TorchScript archive is found.
expect 0 diff --only parameters "$z/cnn.pt" "$tmp/cnn.pt2"
has 'parameters: same'
"$py" - "$z/cnn.pt" "$tmp/cnn_changed.pt" <<'PY' 2>/dev/null || bad "cannot change a weight of cnn.pt"
import sys, torch
m = torch.jit.load(sys.argv[1])
name, p = next(iter(m.named_parameters()))
with torch.no_grad():
    p.view(-1)[0] += 1.0
m.save(sys.argv[2])
print(name)
PY
expect 1 diff --only parameters "$tmp/cnn_changed.pt" "$tmp/cnn.pt2"
has '1 of .* elements differ'
# A batch norm: the program leaves num_batches_tracked out of its signature
# but torch.export.save stores it; validate reads the .pt2 without a FAIL
# (torch.export.load keeps such tensors, unused) and says so.
expect 0 migrate "$z/bn.pt" -i 1x3x8x8 -o "$tmp/bn.pt2"
has ': packaged'
expect 7 validate "$tmp/bn.pt2"  # read, not run: no C++ runner for exported programs here (NOT RUN)
has 'PASS  pt2.program .*stored tensors outside its signature, unused'
# Data-dependent control flow, inputs given.
expect 0 migrate "$z/branchy.pt" -i 4x6 -o "$tmp/branchy.pt2"
has ': packaged'
# Independently: the written programs against the archives, on the sample
# and on other sizes of every dimension they claim dynamic.
"$py" - "$z" "$tmp" <<'PY' 2>&1 | grep -v -e Warning -e warn || bad "the Python check of the written programs failed"
import json, sys, torch
z, tmp = sys.argv[1], sys.argv[2]
bad = 0
for name, shape in (("cnn", (1, 3, 8, 8)), ("branchy", (4, 6))):
    ts = torch.jit.load(f"{z}/{name}.pt")
    extra = {"tsctl_migrate.json": ""}
    ep = torch.export.load(f"{tmp}/{name}.pt2", extra_files=extra)
    record = json.loads(extra["tsctl_migrate.json"])
    assert record["verified"] is True and record["source"] == name + ".pt" and len(record["source_sha256"]) == 64, record
    users = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in set(ep.graph_signature.user_inputs)]
    dims = [i for i, d in enumerate(users[0].meta["val"].shape) if isinstance(d, torch.SymInt)]
    shapes = [shape] + [tuple(s + 2 if i == k else s for i, s in enumerate(shape)) for k in dims]
    for s in shapes:
        x = torch.randn(s)
        a, b = ts(x), ep.module()(x)
        if not torch.allclose(a, b, rtol=1e-5, atol=1e-5):
            print(f"{name}: {s} differs"); bad = 1
    print(f"{name}: {len(shapes)} shapes agree (dynamic dims {dims})")
sys.exit(bad)
PY
# The loop: blocked, with its node kind and where it is; nothing written.
expect 1 migrate "$z/loop.pt" -i 3x4 -o "$tmp/loop.pt2"
has 'blocker   prim::Loop at '
has 'migrate_models.py'
[ -e "$tmp/loop.pt2" ] && bad "a blocked conversion wrote $tmp/loop.pt2"
# Outputs that differ: not written; with --keep-unverified written, marked.
expect 1 migrate "$z/noisy.pt" -i 2x3 -o "$tmp/noisy.pt2"
has 'DIFFERS'
has 'blocker   wrong result'
[ -e "$tmp/noisy.pt2" ] && bad "an unverified conversion wrote $tmp/noisy.pt2"
has 'compare-intermediates names the first node'
grep -q 'first differing node' "$tmp/out" && bad "a divergence named without --compare-intermediates"
# --compare-intermediates: the noise in the middle of noisy_deep.pt is named
# (aten::rand, after the linear layer and relu that agree), in text and JSON.
expect 1 migrate "$z/noisy_deep.pt" -i 2x6 -o "$tmp/noisy_deep.pt2" --compare-intermediates
has 'first differing node aten::rand at .*migrate_models.py.* (the program.s rand (aten::rand)): max abs'
has '2 of [0-9]* matched nodes agree before it'
expect 1 migrate "$z/noisy_deep.pt" -i 2x6 -o "$tmp/noisy_deep.pt2" --compare-intermediates --json
/usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))['results'][0]['checks'][0]['intermediates']
assert d['compared'] and d['node'] == 'aten::rand' and d['agreed'] == 2 and d['matched'] >= 3 and d['max_abs'] > 0, d
" "$tmp/out" || bad "--compare-intermediates --json: no intermediates naming aten::rand: $(head -c 600 "$tmp/out")"
expect 1 migrate "$z/noisy.pt" -i 2x3 -o "$tmp/noisy.pt2" --keep-unverified
has 'written UNVERIFIED'
"$py" -c "
import json, sys, torch
e = {'tsctl_migrate.json': ''}
torch.export.load(sys.argv[1], extra_files=e)
assert json.loads(e['tsctl_migrate.json'])['verified'] is False
" "$tmp/noisy.pt2" 2>/dev/null || bad "noisy.pt2's record does not say verified: false"
# The converted program against the original archive: read, not run (no C++
# runner for exported programs here), so NOT RUN, never PASSED.
expect 7 validate "$tmp/cnn.pt2" --reference-model "$z/cnn.pt"
has 'result: NOT RUN'
# A zoo: one report, the stage table and the ranked blockers; JSON by its
# schema (inputs stored in cnn.pt, inferred for the others).
mkdir "$tmp/programs"
expect 1 migrate "$z/cnn.pt" "$z/loop.pt" "$z/noisy.pt" --out-dir "$tmp/programs" --json
cp "$tmp/out" "$tmp/zoo.json"
/usr/bin/python3 - "$tmp/zoo.json" "$root/docs/schemas/migrate.schema.json" <<'PY' || bad "the zoo's JSON is not as expected"
import json, sys
doc = json.load(open(sys.argv[1]))
try:
    import jsonschema
    jsonschema.validate(doc, json.load(open(sys.argv[2])))
except ImportError:
    pass
stages = {r["path"].rsplit("/", 1)[1]: r["stage"] for r in doc["results"]}
assert stages["cnn.pt"] == "packaged", stages
assert stages["loop.pt"] in ("inputs", "loaded", "none"), stages
assert doc["summary"]["archives"] == 3 and doc["summary"]["reached"]["packaged"] == 1, doc["summary"]
kinds = [b["kind"] for b in doc["summary"]["blockers"]]
assert all(r["blockers"] for r in doc["results"] if r["stage"] != "packaged"), "a failure without a blocker"
print("zoo:", stages, "blockers:", kinds)
PY
[ -e "$tmp/programs/cnn.pt2" ] || bad "the zoo did not write cnn.pt2"
mkdir "$tmp/programs2"
expect 1 migrate "$z/cnn.pt" "$z/loop.pt" --out-dir "$tmp/programs2" --report "$tmp/zoo.html"
has 'stage reached'
has 'prim::Loop'
# Its page (--report): the sections, a bar per stage, the loop ranked as a
# blocker with its node and source line, cnn's timings, every output's
# errors on the sample and on another size, the file written.
/usr/bin/python3 - "$tmp/zoo.html" "$tmp/programs2/cnn.pt2" <<'PY' || bad "the zoo's page is not as expected"
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
for i in ("summary", "blockers", "archives", "a1", "a2"):
    assert page.count('id="%s"' % i) == 1, i
assert page.count('<section id="a') == 2
assert page.count('<rect class="bar"') == 6, "a bar per stage"
assert '<td>loaded</td><td class="n">2</td>' in page and '<td>packaged</td><td class="n">1</td>' in page
assert '<th>result</th><td>1 of 2 migrated (verified and written)</td>' in page
assert re.search(r'<td class="mono">prim::Loop</td><td class="n">1</td><td><a href="#a2">[^<]*loop\.pt</a>', page)
assert re.search(r'<td class="mono">prim::Loop</td><td class="mono">[^<]*prim::Loop[^<]*</td>'
                 r'<td class="mono">[^<]*migrate_models\.py[^<]*</td>', page), "the loop's node and source line"
cnn = page[page.index('<section id="a1"'):page.index('<section id="a2"')]
for step in ("inputs", "load", "conversion", "verification on the sample", "packaging"):
    assert "<td>%s</td><td class=\"n\">" % step in cnn, step
sample = re.search(r'<h3>On <code>sample \(1x3x8x8\)</code></h3><p><span class="pass">matched</span></p>'
                   r'<table>.*?<td class="mono">output 0</td><td class="n">([^<]*)</td>', cnn)
assert sample and float(sample.group(1)) <= 1e-5, "the sample's per-output error"
assert re.search(r'shape\[2\]=9 \(1x3x9x8\)</code></h3><p><span class="pass">matched</span></p><table>.*?output 0', cnn)
assert "<th>file</th><td>%s</td>" % sys.argv[2] in cnn and "extra/tsctl_migrate.json" in cnn
print("zoo page: %d bytes, sections and figures as expected" % len(page))
PY
# Shards of a folder: 1/2 and 2/2 split its archives between them, each a
# JUnit report with a testcase per archive, failed unless packaged.
mkdir "$tmp/shards" "$tmp/shard_zoo"
cp "$z/cnn.pt" "$z/loop.pt" "$z/noisy.pt" "$tmp/shard_zoo/"
"$tsctl" migrate "$tmp/shard_zoo" --shard 1/2 --out-dir "$tmp/shards" --format junit >"$tmp/s1.xml" 2>/dev/null
"$tsctl" migrate "$tmp/shard_zoo" --shard 2/2 --out-dir "$tmp/shards" --format junit >"$tmp/s2.xml" 2>/dev/null
/usr/bin/python3 - "$tmp/s1.xml" "$tmp/s2.xml" <<'PY' || bad "the shards' JUnit reports are not as expected"
import sys, xml.etree.ElementTree as ET
cases = {}
for f in sys.argv[1:]:
    for tc in ET.parse(f).getroot().iter("testcase"):
        cases[tc.get("name").rsplit("/", 1)[1]] = tc.find("failure") is not None
assert sorted(cases) == ["cnn.pt", "loop.pt", "noisy.pt"], cases   # each once, across the two shards
assert cases == {"cnn.pt": False, "loop.pt": True, "noisy.pt": True}, cases
print("shards:", cases)
PY
expect 2 migrate "$tmp/shard_zoo" --shard 3/2 --out-dir "$tmp/shards"
# --out-dir made when missing (as mkdir -p), and --jobs 2: the same report
# as --jobs 1 (the zoo above), in the same order, timings aside.
expect 1 migrate "$z/cnn.pt" "$z/loop.pt" "$z/noisy.pt" --out-dir "$tmp/new/deeper" --jobs 2 --json
cp "$tmp/out" "$tmp/zoo_j2.json"
[ -e "$tmp/new/deeper/cnn.pt2" ] || bad "--out-dir was not made, or cnn.pt2 not written into it"
/usr/bin/python3 - "$tmp/zoo.json" "$tmp/zoo_j2.json" <<'PY' || bad "--jobs 2 reports otherwise than --jobs 1"
import json, re, sys
# How many values lie beyond the tolerance, out of all (noisy.pt: 150525 or
# 150527 of 150528 from one run to the next): the count, not the message.
count = lambda text: re.sub(r"\b\d+ of (\d+) values", r"N of \1 values", text)
def norm(path):
    doc = json.load(open(path))
    for r in doc["results"]:
        r.pop("seconds"); r.pop("timings")
        if r["output"]:
            r["output"] = r["output"].rsplit("/", 1)[1]
        r["error"] = count(r["error"])
        for b in r["blockers"]:
            b["node"] = count(b["node"])
        for c in r["checks"]:  # values drawn alike; the converter's float order may not be
            c["error"] = count(c["error"])
            for k in ("max_abs", "max_rel"):
                c[k] = c[k] >= 0
            for o in c["outputs"]:
                o["max_abs"] = o["max_rel"] = 0
    return doc
a, b = norm(sys.argv[1]), norm(sys.argv[2])
assert a == b, (a, b)
print("--jobs 2: the same report as --jobs 1 (%d archives, in order)" % len(b["results"]))
PY
# --bench: the archive and the program timed in the same run on the same
# inputs; each form's median positive, the ratio against TorchScript's
# (figures only: no timed assertion).
expect 0 migrate "$z/cnn.pt" -o "$tmp/cnn_bench.pt2" --bench --bench-iters 5
has '  bench     TorchScript  '
has 'torch.export program .*x TorchScript'
has 'median of 5 calls each after 3 warm-up, in turns'
expect 0 migrate "$z/cnn.pt" -o "$tmp/cnn_bench.pt2" --bench --bench-iters 5 --json --report "$tmp/bench.html"
/usr/bin/python3 - "$tmp/out" "$root/docs/schemas/migrate.schema.json" "$tmp/bench.html" <<'PY' || bad "--bench's figures are not as expected"
import json, sys
doc = json.load(open(sys.argv[1]))
try:
    import jsonschema
    jsonschema.validate(doc, json.load(open(sys.argv[2])))
except ImportError:
    pass
b = doc["results"][0]["bench"]
forms = {f["form"]: f for f in b["forms"]}
assert list(forms) == ["torchscript", "program"] and b["warmup"] == 3, b
for f in forms.values():
    assert f["error"] == "" and len(f["latencies_ns"]) == 5 and all(t > 0 for t in f["latencies_ns"]), f
    assert f["median_ns"] > 0 and f["ratio"] > 0, f
assert forms["torchscript"]["ratio"] == 1.0
page = open(sys.argv[3], encoding="utf-8").read()
assert "<h3>Speed</h3>" in page and "<td>torch.export program</td>" in page
print("bench: " + ", ".join("%s %.0f us (%.2fx)" % (k, f["median_ns"] / 1e3, f["ratio"]) for k, f in forms.items()))
PY
# A model not verified is not timed.
expect 1 migrate "$z/noisy.pt" -i 2x3 -o "$tmp/noisy_bench.pt2" --bench
grep -q '  bench ' "$tmp/out" && bad "an unverified model was timed"
[ "$fail" = 0 ] && echo "migrate: all passed"
exit "$fail"
