#!/usr/bin/env bash
# Installs what tsctl's default build needs from Debian 12's packages.
# Idempotent: does nothing (and needs no network) when everything is present.
#   scripts/install_deps.sh           everything: the build, the tests, the
#                                     embedded Python, the benchmarks
#   scripts/install_deps.sh --minimal what scripts/demo.sh builds: the CLI, the
#                                     library and the LibTorch plugin (Catch2
#                                     and libzip too: configuring asks for them)
set -euo pipefail
minimal=(
  build-essential cmake pkg-config
  libtorch-dev libzip-dev zlib1g-dev libcli11-dev nlohmann-json3-dev libpugixml-dev catch2
  libseccomp-dev                      # the LibTorch children's sandbox (seccomp-bpf)
  libflatbuffers-dev flatbuffers-compiler  # ExecuTorch .pte/.ptd/.bpte: FlatBuffers headers and flatc (schemas compiled at build time)
  ccache                              # caches compilations between builds (CMakeLists.txt)
  ninja-build                         # scripts/demo.sh builds with Ninja (progress over all the steps)
)
case ${1:-} in
  --minimal) packages=("${minimal[@]}") ;;
  "") packages=() ;;
  *) echo "install_deps: unknown argument '$1' (--minimal or none)" >&2; exit 2 ;;
esac
[ "${1:-}" = --minimal ] || packages=(
  build-essential cmake pkg-config
  libtorch-dev libzip-dev zlib1g-dev libcli11-dev nlohmann-json3-dev libpugixml-dev catch2
  python3-torch python3-torchvision   # test data generation, benchmarks, trace/script --python
  python3-dev pybind11-dev            # the embedded interpreter of trace/script --python
  graphviz                            # renders `tsctl graph --format dot` in a test
  chromium                            # headless: loads `tsctl report` pages offline in a test (report_browser)
  python3-jsonschema                  # tests validate JSON output against docs/schemas
  zip unzip
  libseccomp-dev                      # the LibTorch children's sandbox (seccomp-bpf)
  libflatbuffers-dev flatbuffers-compiler  # ExecuTorch .pte/.ptd/.bpte: FlatBuffers headers and flatc (schemas compiled at build time)
  ccache                              # caches compilations between builds (CMakeLists.txt)
  ninja-build                         # scripts/demo.sh builds with Ninja (progress over all the steps)
  dpkg-dev                            # dpkg-shlibdeps: the .deb's dependencies (cpack -G DEB)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all packages present"
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
