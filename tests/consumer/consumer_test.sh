#!/usr/bin/env bash
# Installs this build into a scratch prefix, then builds tests/consumer against
# it twice, as another project would: with CMake (find_package(tsctl),
# tsctl::tsctl) and with pkg-config (tsctl.pc). Both programs must read an
# archive and refuse a non-archive with the library's error; nothing installed
# may need nlohmann_json.
#   consumer_test.sh CMAKE BUILD_DIR SOURCE_DIR CXX
set -eu
cmake=$1 build=$2 src=$3 cxx=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
for f in lib/cmake/tsctl/tsctlConfig.cmake lib/cmake/tsctl/tsctlConfigVersion.cmake lib/cmake/tsctl/tsctlTargets.cmake \
         lib/pkgconfig/tsctl.pc include/tsctl/archive.h; do
  [ -f "$prefix/$f" ] || { echo "FAIL: $f is not installed"; exit 1; }
done
# SOVERSION: the real file, the soname link, the development link.
[ -L "$prefix/lib/libtsctl.so" ] && [ -L "$prefix/lib/libtsctl.so.0" ] && [ -f "$prefix/lib/libtsctl.so.0.1.0" ] ||
  { echo "FAIL: libtsctl.so is not versioned"; ls -l "$prefix/lib"; exit 1; }
objdump -p "$prefix/lib/libtsctl.so.0.1.0" | grep -q 'SONAME *libtsctl.so.0$' || { echo "FAIL: no SONAME libtsctl.so.0"; exit 1; }
# The API carries no JSON library, wire format or plugin interface: nothing
# installed names nlohmann (Debian keeps it in /usr/include, so a build alone
# would not notice), and no private header is installed.
if grep -rl nlohmann "$prefix/include" "$prefix/lib/cmake" "$prefix/lib/pkgconfig"; then
  echo "FAIL: the installed headers or package files need nlohmann_json"; exit 1
fi
for f in json_input.h producer.h plugin_abi.h; do
  [ ! -e "$prefix/include/tsctl/$f" ] || { echo "FAIL: private header $f is installed"; exit 1; }
done

"$cmake" -S "$src/tests/consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_RPATH="$prefix/lib" >"$tmp/log" 2>&1 || { cat "$tmp/log"; echo "FAIL: the consumer does not configure"; exit 1; }
"$cmake" --build "$tmp/cmake-build" >"$tmp/log" 2>&1 || { cat "$tmp/log"; echo "FAIL: the consumer does not build"; exit 1; }
"$cxx" -std=c++17 -o "$tmp/pc-consumer" "$src/tests/consumer/main.cc" \
  $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs tsctl) -Wl,-rpath,"$prefix/lib" ||
  { echo "FAIL: the consumer does not build with pkg-config"; exit 1; }

for exe in "$tmp/cmake-build/consumer" "$tmp/pc-consumer"; do
  out=$("$exe" "$src/testdata/traced_cnn.pt")
  echo "$out"
  [[ $out == "libtsctl: torchscript, "*" records, module __torch__."* ]] || { echo "FAIL: $exe printed: $out"; exit 1; }
  # It runs the installed library, not the build tree's.
  ldd "$exe" | grep -q "$prefix/lib/libtsctl.so.0" || { echo "FAIL: $exe does not use the installed libtsctl"; exit 1; }
  set +e
  "$exe" "$src/README.md" 2>"$tmp/err"
  rc=$?
  set -e
  [ $rc = 4 ] && grep -q '^consumer: ' "$tmp/err" || { echo "FAIL: $exe on README.md: exit $rc"; cat "$tmp/err"; exit 1; }
done
echo "consumer builds with find_package(tsctl) and pkg-config"
