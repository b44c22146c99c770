#!/usr/bin/env bash
# Builds the Debian package with CPack, checks its metadata and contents, unpacks
# it into a scratch root (dpkg -x, no root rights needed) and runs the unpacked
# tsctl from there: --version and inspect.
#   deb_test.sh CPACK BUILD_DIR SOURCE_DIR
set -eu
cpack=$1 build=$2 src=$3
command -v dpkg-deb >/dev/null || { echo "dpkg-deb not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$build" && "$cpack" -G DEB -B "$tmp/out" >"$tmp/log" 2>&1) || { cat "$tmp/log"; echo "FAIL: cpack -G DEB"; exit 1; }
deb=$(ls "$tmp"/out/tsctl_*.deb)
dpkg-deb -I "$deb" >"$tmp/info"
grep -q '^ Package: tsctl$' "$tmp/info" || { cat "$tmp/info"; echo "FAIL: package name"; exit 1; }
grep -q '^ Depends: .*libc6' "$tmp/info" || { cat "$tmp/info"; echo "FAIL: no declared dependencies"; exit 1; }
sed -n 's/^ Depends: /depends: /p' "$tmp/info"
dpkg-deb -c "$deb" | awk '{print $6}' >"$tmp/contents"
for f in ./usr/bin/tsctl ./usr/lib/libtsctl.so.0 ./usr/share/man/man1/tsctl.1 ./usr/share/man/man1/tsctl-inspect.1 \
         ./usr/share/bash-completion/completions/tsctl ./usr/share/zsh/vendor-completions/_tsctl \
         ./usr/lib/cmake/tsctl/tsctlConfig.cmake ./usr/lib/pkgconfig/tsctl.pc; do
  grep -qx "$f" "$tmp/contents" || { echo "FAIL: $f is not in the package"; exit 1; }
done
if "$build/bin/tsctl" --version | grep -q '^libtorch [0-9]'; then
  grep -qx ./usr/lib/libtsctl_torch.so "$tmp/contents" || { echo "FAIL: the LibTorch plugin is not in the package"; exit 1; }
fi

if "$build/bin/tsctl" --version | grep -q '^executorch runtime ExecuTorch'; then
  for f in ./usr/lib/tsctl-pte-runner ./usr/lib/tsctl-executorch/libexecutorch.so; do
    grep -qx "$f" "$tmp/contents" || { echo "FAIL: $f (ExecuTorch's runtime) is not in the package"; exit 1; }
  done
fi

root=$tmp/root
dpkg -x "$deb" "$root"
"$root/usr/bin/tsctl" --version | tee "$tmp/version"
# The unpacked tsctl reports the same build as the build tree's, plugins included.
diff <("$build/bin/tsctl" --version | sed 's/ from .*//') <(sed 's/ from .*//' "$tmp/version") ||
  { echo "FAIL: the unpacked tsctl --version differs from the build's"; exit 1; }
out=$("$root/usr/bin/tsctl" inspect "$src/testdata/traced_cnn.pt")
grep -q 'traced_cnn' <<<"$out" || { echo "$out"; echo "FAIL: tsctl inspect from the package"; exit 1; }
# It runs its own library, not the build tree's.
LD_DEBUG=libs "$root/usr/bin/tsctl" --version 2>&1 >/dev/null | grep -q "calling init: $root/usr/.*libtsctl.so.0" ||
  { echo "FAIL: the unpacked tsctl does not load the unpacked libtsctl"; exit 1; }
# The packaged runner runs a program with the packaged runtime's libraries.
if grep -q '^executorch runtime ExecuTorch' "$tmp/version"; then
  out=$("$root/usr/bin/tsctl" validate "$src/testdata/pte/linear_xnnpack.pte") || { echo "$out"; echo "FAIL: validate of a .pte from the package"; exit 1; }
  grep -q 'PASS  pte.run' <<<"$out" || { echo "$out"; echo "FAIL: the packaged runner did not run the program"; exit 1; }
fi
echo "package $(basename "$deb"): $(wc -l <"$tmp/contents") entries, runs from a scratch root"
