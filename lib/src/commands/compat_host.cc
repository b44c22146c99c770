// tsctl compat's `host` target: this machine, as an archive's native code and
// stored tensors need it. The CPU's instruction sets (/proc/cpuinfo), the
// symbol versions its C and C++ runtimes define (the libc.so.6 and
// libstdc++.so.6 this process runs with: what the dynamic loader would bind
// an AOTInductor package's .so against), and the CUDA devices the NVIDIA
// driver reports (libcuda, asked for each device's compute capability; no
// CUDA runtime or LibTorch is loaded).
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "../archive/pt2_machine.h"
#include "compat_internal.h"
#include "tsctl/compat.h"
#include "tsctl/escape.h"

namespace tsctl {
namespace {

std::string ReadSmallFile(const std::string& path, size_t most = size_t{64} << 20) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > most) return "";
  }
  return text;
}

int AddLibrary(dl_phdr_info* info, size_t, void* data) {
  const std::string name = info->dlpi_name ? info->dlpi_name : "";
  const auto slash = name.rfind('/');
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  if (base == "libc.so.6" || base == "libstdc++.so.6") {
    auto& host = *static_cast<CompatHost*>(data);
    for (const std::string& v : ElfDefinedVersions(ReadSmallFile(name))) host.symbol_versions.insert(v);
  }
  return 0;
}

void ProbeCuda(CompatHost& host) {
  const std::string version = ReadSmallFile("/proc/driver/nvidia/version", 4096);
  if (const auto at = version.find("Kernel Module"); at != std::string::npos) {
    std::istringstream in(version.substr(at + 13));
    in >> host.cuda_driver;
  }
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cuda) {
    host.cuda_note = host.cuda_driver.empty() ? "no NVIDIA driver" : "libcuda.so.1 cannot be opened";
    return;
  }
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  using Attribute = int (*)(int*, int, int);
  auto init = reinterpret_cast<Init>(dlsym(cuda, "cuInit"));
  auto count = reinterpret_cast<Count>(dlsym(cuda, "cuDeviceGetCount"));
  auto attribute = reinterpret_cast<Attribute>(dlsym(cuda, "cuDeviceGetAttribute"));
  int n = 0;
  if (!init || !count || !attribute || init(0) != 0 || count(&n) != 0) {
    host.cuda_note = "the NVIDIA driver reports no usable device";
    return;
  }
  for (int d = 0; d < n; ++d) {
    int major = 0, minor = 0;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR
    if (attribute(&major, 75, d) == 0 && attribute(&minor, 76, d) == 0) {
      host.cuda_devices.push_back("sm_" + std::to_string(major * 10 + minor));
    }
  }
}

}  // namespace

CompatHost ProbeHost() {
  CompatHost host;
  std::istringstream flags(CpuFlags());
  for (std::string f; flags >> f;) host.cpu_features.insert(f);
  std::istringstream cpuinfo(ReadSmallFile("/proc/cpuinfo", size_t{16} << 20));
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      host.cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  dl_iterate_phdr(AddLibrary, &host);
  // The newest GLIBC_2.N the C library defines: its release ("2.36").
  double newest = -1;
  for (const std::string& v : host.symbol_versions) {
    if (v.rfind("GLIBC_2.", 0) != 0) continue;
    const double minor = std::strtod(v.c_str() + 8, nullptr);
    if (minor > newest) newest = minor, host.glibc = v.substr(6);
  }
  ProbeCuda(host);
  return host;
}

void JudgeHost(const CompatNeeds& n, const CompatHost& host, std::vector<std::string>& incompatible,
               std::vector<std::string>& unknown, std::vector<std::string>& checked) {
  const bool cuda = !host.cuda_devices.empty();
  std::vector<std::string> cuda_stored;
  for (const std::string& d : n.devices) {
    if (d.rfind("cuda", 0) == 0) cuda_stored.push_back(EscapeText(d));
  }
  if (!cuda_stored.empty() && !cuda) {
    incompatible.push_back("tensors stored on " + cuda_stored[0] + " and this machine has no CUDA device (" +
                           host.cuda_note + "): loading needs a map location (torch.jit.load(..., map_location='cpu'))");
  }
  if (!n.aoti_device.empty() && n.aoti_device != "cpu") {
    if (n.aoti_device == "cuda" && !cuda) {
      incompatible.push_back("an AOTInductor package compiled for CUDA, and this machine has no CUDA device (" +
                             host.cuda_note + ")");
    } else if (n.aoti_device != "cuda") {
      unknown.push_back("compiled for device '" + EscapeText(n.aoti_device) + "', which tsctl does not probe");
    }
  }
  for (const std::string& arch : n.cuda_archs) {
    if (!cuda) break;
    if (std::find(host.cuda_devices.begin(), host.cuda_devices.end(), arch) == host.cuda_devices.end()) {
      incompatible.push_back("kernels built for " + EscapeText(arch) + " only; this machine's device(s): " +
                             JoinAll(host.cuda_devices) + " (a cubin runs on its own architecture)");
    }
  }
  std::vector<std::string> missing_features, missing_versions;
  if (!n.cpu_features.empty()) {
    std::string isa, flags;
    for (const std::string& f : n.cpu_features) isa += f + " ";
    for (const std::string& f : host.cpu_features) flags += f + " ";
    for (const std::string& f : Pt2MissingCpuFeatures(isa, flags)) missing_features.push_back(EscapeText(f));
  }
  for (const std::string& v : n.symbol_versions) {
    const bool ours = v.rfind("GLIBC_", 0) == 0 || v.rfind("GLIBCXX_", 0) == 0 || v.rfind("CXXABI_", 0) == 0;
    if (ours && !host.symbol_versions.count(v)) missing_versions.push_back(EscapeText(v));
  }
  if (!missing_features.empty()) {
    incompatible.push_back("compiled for CPU features this CPU lacks: " + JoinAll(missing_features) +
                           (host.cpu.empty() ? "" : " (" + host.cpu + ")"));
  }
  if (!missing_versions.empty()) {
    incompatible.push_back("its shared objects need symbol versions this system's libc/libstdc++ lack: " +
                           JoinAll(missing_versions) + " (glibc " + host.glibc + ")");
  }
  for (const std::string& b : n.backends) {
    if (b != "XnnpackBackend") unknown.push_back("delegates to " + EscapeText(b) + ", whose hardware tsctl does not probe");
  }
  checked.push_back(cuda_stored.empty() ? "no tensor stored on a CUDA device" : "CUDA devices present");
  if (!n.symbol_versions.empty()) checked.push_back("symbol versions defined (glibc " + host.glibc + ")");
  if (!n.cpu_features.empty()) checked.push_back("CPU features present");
  if (!n.aoti_device.empty()) checked.push_back("device " + EscapeText(n.aoti_device));
}

}  // namespace tsctl
