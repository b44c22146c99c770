#!/usr/bin/env bash
# --load-library, TSCTL_LOAD_LIBRARIES, the static operator list and the
# missing-operator diagnosis, end to end, with our own TORCH_LIBRARY operator
# (tsctl_test::affine in test_ops.cc).
#   custom_op_test.sh TSCTL LIBRARY SOURCE_DIR
set -u
tsctl=$1 lib=$2 src=$3
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
unset TSCTL_LOAD_LIBRARIES
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run NAME EXPECTED_EXIT ARGS...: runs tsctl, keeps stdout/stderr in $t/NAME.{out,err}.
run() {
  local name=$1 want=$2
  shift 2
  "$tsctl" "$@" >"$t/$name.out" 2>"$t/$name.err"
  local got=$?
  [ "$got" = "$want" ] || fail "$name: exit $got, expected $want (tsctl $*): $(head -c 400 "$t/$name.err")"
}
# one_line NAME PATTERN: stderr of NAME is exactly one line matching PATTERN.
one_line() {
  [ "$(wc -l <"$t/$1.err")" = 1 ] || fail "$1: stderr is not one line: $(head -c 600 "$t/$1.err")"
  grep -q -- "$2" "$t/$1.err" || fail "$1: stderr lacks '$2': $(cat "$t/$1.err")"
}

# script compiles the source only with the library.
run script_without 2 script "$src/affine.ts" -o "$t/affine.pt"
one_line script_without "tsctl_test::affine (namespace 'tsctl_test': pass the library that registers it"
[ -e "$t/affine.pt" ] && fail "script_without wrote an archive"
run script 0 script --load-library "$lib" "$src/affine.ts" -o "$t/affine.pt" --input 2x3
a=$t/affine.pt

# graph: the diagnosis without the library, the IR with it (flag or environment).
run graph_without 5 graph "$a"
one_line graph_without "^tsctl: graph: $a: operators not registered in this LibTorch: tsctl_test::affine (namespace 'tsctl_test'"
run graph 0 graph --load-library "$lib" "$a"
diff -u "$src/affine.graph" "$t/graph.out" || fail "graph differs from affine.graph"
TSCTL_LOAD_LIBRARIES="/nonexistent-dir-is-skipped-never:$lib" run graph_env 6 graph "$a"
one_line graph_env "cannot load operator library /nonexistent-dir-is-skipped-never: "
TSCTL_LOAD_LIBRARIES="::$lib:" run graph_env 0 graph "$a"
cmp -s "$t/graph.out" "$t/graph_env.out" || fail "graph with TSCTL_LOAD_LIBRARIES differs from --load-library"

# A library that cannot be loaded: one line with the loader's reason, exit 6.
run bad_lib 6 graph --load-library "$t/missing.so" "$a"
one_line bad_lib "^tsctl: graph: $a: cannot load operator library $t/missing.so: cannot open shared object file"
echo "not ELF" >"$t/bogus.so"
run bad_lib2 6 validate --load-library "$t/bogus.so" "$a"
one_line bad_lib2 "cannot load operator library $t/bogus.so: "

# code --compiled
run code_without 5 code --compiled "$a"
one_line code_without "tsctl_test::affine"
run code 0 code --compiled --load-library "$lib" "$a"
grep -q "ops.tsctl_test.affine" "$t/code.out" || fail "code --compiled does not show the operator: $(cat "$t/code.out")"

# validate: loads and runs with the library (in its child process), fails with the diagnosis without.
run validate_without 1 validate "$a"
grep -q "FAIL  *torch.load .*operators not registered in this LibTorch: tsctl_test::affine" "$t/validate_without.out" ||
  fail "validate without the library: $(cat "$t/validate_without.out")"
run validate 0 validate --load-library "$lib" "$a"
grep -q "PASS  *torch.run" "$t/validate.out" || fail "validate did not run: $(cat "$t/validate.out")"

# The static list: --no-load needs no library.
run list_ops 0 validate --no-load --list-ops "$a"
printf 'aten::relu\ntsctl_test::affine\n' | diff -u - "$t/list_ops.out" || fail "static --list-ops"
run list_ops_loaded 0 validate --load-library "$lib" --list-ops "$a"
grep -qx "tsctl_test::affine" "$t/list_ops_loaded.out" || fail "--list-ops after loading: $(cat "$t/list_ops_loaded.out")"
run list_ops_two 0 validate --no-load --list-ops "$a" testdata/traced_cnn.pt
head -1 "$t/list_ops_two.out" | grep -qx "# $a" || fail "--list-ops over two archives does not name the first"
grep -qx "# testdata/traced_cnn.pt" "$t/list_ops_two.out" || fail "--list-ops over two archives does not name the second"
echo "aten::relu" >"$t/allowed"
run allow_static 1 validate --no-load --allow-ops "$t/allowed" "$a"
grep -q "FAIL  *code.ops .*operators not in the allowed list: tsctl_test::affine" "$t/allow_static.out" || fail "static --allow-ops: $(cat "$t/allow_static.out")"
echo "tsctl_test::affine" >>"$t/allowed"
run allow_static_ok 0 validate --no-load --allow-ops "$t/allowed" "$a"

# inspect lists the operators by namespace, in text and JSON.
run inspect 0 inspect "$a"
grep -q "^  tsctl_test (1): affine x2$" "$t/inspect.out" || fail "inspect text: $(grep -A4 Operators "$t/inspect.out")"
run inspect_json 0 inspect --json "$a"
/usr/bin/python3 - "$t/inspect_json.out" <<'PY' || fail "inspect JSON operators"
import json, sys
ops = json.load(open(sys.argv[1]))["operators"]
assert ops["source"] == "code", ops
assert {"name": "tsctl_test::affine", "namespace": "tsctl_test", "count": 2} in ops["totals"], ops
assert ops["by_namespace"]["tsctl_test"] == {"operators": 1, "calls": 2}, ops
assert any(m["method"] == "__torch__.Net.forward" for m in ops["methods"]), ops
PY

# bench and trace load the library too.
run bench_without 5 bench --iters 2 --warmup 1 "$a"
one_line bench_without "tsctl_test::affine"
run bench 0 bench --load-library "$lib" --iters 2 --warmup 1 "$a"
run trace 0 trace --load-library "$lib" "$a" --input 2x3 -o "$t/traced.pt"
run traced_graph 0 graph --load-library "$lib" "$t/traced.pt"
grep -q "tsctl_test::affine" "$t/traced_graph.out" || fail "the traced graph lost the operator"

[ $fails = 0 ] && echo "custom_op: all checks passed"
exit $((fails > 0))
