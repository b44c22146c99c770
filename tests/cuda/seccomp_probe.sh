#!/bin/bash
# The CUDA driver under tsctl's seccomp rule for CUDA children: cuInit must
# work with it (and fails, 304, with AF_UNIX sockets refused, the rule of the
# other children). Skipped (77) where no CUDA driver (libcuda.so.1) loads.
# usage: seccomp_probe.sh    (PROBE=FILE: a probe built elsewhere)
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
probe=${PROBE:-$tmp/probe}
if [ -z "${PROBE:-}" ] && ! gcc -O1 -o "$probe" "$(dirname "$0")/seccomp_probe.c" -lseccomp -ldl 2>"$tmp/cc.log"; then
  echo "skipped: cannot build the probe (a C compiler and libseccomp's headers): $(head -1 "$tmp/cc.log")"
  exit 77
fi
none=$("$probe" none)
echo "$none"
case $none in
  *dlopen*|*"cuInit=100 "*) echo "skipped: no CUDA driver or device here"; exit 77 ;;
esac
failed=0
for w in socket tsctl kill:connect kill:bind kill:listen kill:setsockopt kill:sendmsg kill:sendto kill:accept4; do
  out=$("$probe" "$w" 2>&1 | tail -1)
  echo "$w: ${out:-killed (cuInit makes this call)}"
done
"$probe" tsctl | grep -q 'cuInit=0 ' || { echo "FAIL: cuInit fails under tsctl's rule for CUDA children"; failed=1; }
[ $failed -eq 0 ] && echo "cuInit works under tsctl's rule for CUDA children"
exit $failed
