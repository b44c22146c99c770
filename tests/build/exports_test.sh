#!/usr/bin/env bash
# libtsctl exports tsctl's own symbols and nothing else (lib/tsctl.map): an
# inline function of FlatBuffers that it exported once bound ExecuTorch's
# XNNPACK backend, in tsctl-pte-runner, to a FlatBuffers of another version.
# Fails naming the first foreign symbols; fails too when it exports nothing.
#   exports_test.sh LIBTSCTL.so
set -euo pipefail
lib=$1
all=$(nm -DC --defined-only "$lib" | sed 's/^[0-9a-f]* [A-Za-z] //')
[ -n "$all" ] || { echo "FAIL: $lib exports nothing"; exit 1; }
foreign=$(grep -Ev '^(tsctl::|(typeinfo|typeinfo name|vtable|VTT|non-virtual thunk to|guard variable) for tsctl::|non-virtual thunk to tsctl::)' <<<"$all" || true)
if [ -n "$foreign" ]; then
  echo "FAIL: $lib exports $(wc -l <<<"$foreign") symbols outside namespace tsctl, e.g.:"
  head -5 <<<"$foreign"
  exit 1
fi
echo "ok: $(wc -l <<<"$all") symbols, all tsctl's"
