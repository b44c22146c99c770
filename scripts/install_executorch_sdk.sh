#!/usr/bin/env bash
# Installs ExecuTorch's C++ runtime for tsctl's .pte runs: PyPI's executorch
# wheel ships it (executorch/lib/libexecutorch.so with the optimized and
# quantized CPU kernels, XNNPACK and the threadpool; executorch/include/;
# executorch/share/cmake/). This downloads that wheel alone (pip download
# --no-deps: no torch, no Python package installed) and unpacks its lib/,
# include/ and share/ into .executorch-sdk/executorch in the repository,
# where CMake looks (TSCTL_EXECUTORCH_SDK). The libraries need only libc and
# libstdc++. Nothing is copied into the repository's tracked files
# (.executorch-sdk/ is ignored).
# Idempotent: does nothing (and needs no network) when the pinned version is
# there. Progress on stderr; one "install_executorch_sdk: error: ..." line and
# exit 1 on failure (scripts/build.sh then builds without the runtime).
#
#   EXECUTORCH_VERSION   the executorch to pin (default 1.5.1: the first
#                        whose wheel ships the C++ runtime; 1.4.1 and older
#                        ship none)
#   EXECUTORCH_SDK_DIR   where it goes (default .executorch-sdk in the repository)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${EXECUTORCH_VERSION:-1.5.1}
dir=${EXECUTORCH_SDK_DIR:-.executorch-sdk}
say() { echo "install_executorch_sdk: $*" >&2; }
fail() { echo "install_executorch_sdk: error: $*" >&2; exit 1; }
if [ -f "$dir/VERSION" ] && [ "$(cat "$dir/VERSION")" = "$version" ] && [ -f "$dir/executorch/lib/libexecutorch.so" ]; then
  say "executorch $version's runtime is in $dir"
  exit 0
fi
python=${PYTHON:-python3}
command -v "$python" >/dev/null || fail "no $python to run pip with"
tmp=$(mktemp -d /tmp/tsctl-executorch-sdk.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
say "downloading executorch==$version's wheel (about 19 MB, no dependencies)"
# The wheel for CPython 3.11 on manylinux_2_28 x86_64: its C++ libraries do
# not depend on the Python it was built for, so any pip may fetch it.
"$python" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
  --platform manylinux_2_28_x86_64 --implementation cp -d "$tmp" "executorch==$version" >&2 ||
  fail "pip could not download executorch==$version"
wheel=$(ls "$tmp"/executorch-*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || fail "pip downloaded no executorch wheel"
"$python" - "$wheel" "$tmp/unpacked" <<'PY' || fail "could not unpack $wheel"
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(("executorch/lib/", "executorch/include/", "executorch/share/"))]
    if not any(n.endswith("libexecutorch.so") for n in names):
        sys.exit("the wheel has no executorch/lib/libexecutorch.so (a release without the C++ runtime)")
    for n in names:
        z.extract(n, out)
PY
chmod -R u+w,go+rX "$tmp/unpacked"
rm -rf "$dir.new"
mkdir -p "$dir.new"
mv "$tmp/unpacked/executorch" "$dir.new/executorch"
echo "$version" > "$dir.new/VERSION"
rm -rf "$dir"
mv "$dir.new" "$dir"
say "executorch $version's runtime is in $dir ($(du -sh "$dir" | cut -f1))"
