#!/usr/bin/env bash
# The d2go archive of the corpus calls torchvision::nms and roi_align: without
# torchvision's library every command that loads it must name them and the
# library; with --load-library it loads, and graph prints what Python prints
# after `import torchvision` (d2go.graph, written by /usr/bin/python3).
#   d2go_test.sh TSCTL CORPUS_DIR SOURCE_DIR
set -u
tsctl=$1 corpus=$2 src=$3
a=$corpus/android-demo-app__d2go.pt
[ -f "$a" ] || { echo "SKIP: $a is missing"; exit 77; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
unset TSCTL_LOAD_LIBRARIES
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() {
  local name=$1 want=$2
  shift 2
  "$tsctl" "$@" >"$t/$name.out" 2>"$t/$name.err"
  local got=$?
  [ "$got" = "$want" ] || fail "$name: exit $got, expected $want (tsctl $*): $(head -c 400 "$t/$name.err")"
}

# Without the library: one line naming the operators and torchvision's library.
run graph_without 5 graph "$a"
[ "$(wc -l <"$t/graph_without.err")" = 1 ] || fail "graph without torchvision: not one line: $(cat "$t/graph_without.err")"
grep -q "^tsctl: graph: $a: operators not registered in this LibTorch: torchvision::nms, torchvision::roi_align (from torchvision" \
  "$t/graph_without.err" || fail "graph without torchvision: $(cat "$t/graph_without.err")"
lib=$(sed -n 's/.*(from torchvision: --load-library \(.*\))$/\1/p' "$t/graph_without.err")
if [ -z "$lib" ]; then
  echo "SKIP: no torchvision for this LibTorch: $(cat "$t/graph_without.err")"
  exit 77
fi
[ -f "$lib" ] || fail "the named library $lib does not exist"

# With it: Python's graph.
run graph 0 graph --load-library "$lib" "$a"
matched=0
for want in "$src/d2go.graph" "$src"/d2go.graph.alt-*; do
  [ -f "$want" ] && cmp -s "$want" "$t/graph.out" && matched=1
done
[ $matched = 1 ] || { fail "graph differs from d2go.graph"; diff -u "$src/d2go.graph" "$t/graph.out" | head -20; }
TSCTL_LOAD_LIBRARIES=$lib run graph_env 0 graph "$a"
cmp -s "$t/graph.out" "$t/graph_env.out" || fail "TSCTL_LOAD_LIBRARIES gives another graph"

# validate: loads with the library and runs forward on inferred inputs (a
# list of one CHW image); names the operators without it. qnnpack: the engine
# d2go's mobile model was prepared for (Debian's 1.13 aborts in its default
# onednn engine on it, as Python does).
run validate 0 validate --quantized-engine qnnpack --load-library "$lib" "$a"
grep -q "PASS  *torch.load" "$t/validate.out" || fail "validate with torchvision: $(cat "$t/validate.out")"
grep -q "PASS  *torch.run  *ran with inputs inferred: inputs=\[\"3x224x224:float32\"\]" "$t/validate.out" ||
  fail "validate with torchvision did not run forward on an inferred image list: $(cat "$t/validate.out")"
run bench 0 bench --quantized-engine qnnpack --iters 2 --warmup 0 --load-library "$lib" "$a"
grep -q "from inferred" "$t/bench.out" || fail "bench with torchvision: $(cat "$t/bench.out")"
run validate_without 1 validate --no-infer "$a"
grep -q "FAIL  *torch.load .*torchvision::nms, torchvision::roi_align (from torchvision: --load-library $lib)" "$t/validate_without.out" ||
  fail "validate without torchvision: $(cat "$t/validate_without.out")"

# The static list needs no library; code --compiled and bench name the library too.
run list_ops 0 validate --no-load --list-ops "$a"
grep -qx "torchvision::nms" "$t/list_ops.out" && grep -qx "torchvision::roi_align" "$t/list_ops.out" ||
  fail "static --list-ops lacks torchvision: $(cat "$t/list_ops.out")"
run code_without 5 code --compiled "$a"
grep -q "torchvision::nms.*--load-library $lib" "$t/code_without.err" || fail "code --compiled: $(cat "$t/code_without.err")"
run bench_without 5 bench --iters 1 --warmup 0 "$a"
grep -q "torchvision::nms.*--load-library $lib" "$t/bench_without.err" || fail "bench: $(cat "$t/bench_without.err")"

[ $fails = 0 ] && echo "custom_op_d2go: all checks passed"
exit $((fails > 0))
