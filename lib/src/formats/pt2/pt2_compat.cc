// What loading a .pt2 needs (tsctl compat), read without LibTorch: the
// program's schema version (torch.export.load refuses another major
// version), the operators its graph calls (with overloads: "aten::linear"
// for .default), where its tensors sit, and for an AOTInductor package what
// its native code needs of the host: the device and CPU instruction sets in
// its metadata, the CUDA architecture of each cubin, the symbol versions its
// shared objects need (.gnu.version_r).
#include <set>

#include "../../commands/compat_internal.h"
#include "../zip_formats.h"
#include "tsctl/compat.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/format.h"
#include "tsctl/pt2.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

constexpr uint64_t kMaxNativeBytes = uint64_t{1} << 30;

void AddAoti(const Archive& a, const Pt2AotiModel& m, CompatNeeds& n, std::set<std::string>& archs,
             std::set<std::string>& versions) {
  for (const auto& [key, value] : m.metadata) {
    if (key == "AOTI_DEVICE_KEY") n.aoti_device = value;
    if (key == "AOTI_CPU_ISA") {
      size_t at = 0;
      while (at < value.size()) {
        size_t end = value.find(' ', at);
        if (end == std::string::npos) end = value.size();
        if (end > at) n.cpu_features.push_back(value.substr(at, end - at));
        at = end + 1;
      }
    }
  }
  for (const auto& [record, size] : m.files) {
    const bool so = EndsWith(record, ".so"), cubin = EndsWith(record, ".cubin");
    if (!so && !cubin) continue;
    try {
      const std::string bytes = a.Read(record, kMaxNativeBytes);
      if (so && bytes.compare(0, 4, "\x7f" "ELF") != 0) {
        n.notes.push_back(EscapeText(record) + " is not an ELF shared object: what its native code needs is unknown");
      } else if (so) {
        for (const std::string& v : ElfNeededVersions(bytes)) versions.insert(v);
      } else if (const std::string arch = CubinArch(bytes); !arch.empty()) {
        archs.insert(arch);
      }
    } catch (const Error& e) {
      n.notes.push_back(EscapeText(record) + " could not be read: " + e.what());
    }
  }
}

}  // namespace

CompatNeeds Pt2Needs(const OpenedFile& file) {
  const Archive& a = SoundArchive(file);
  const Pt2Info info = ReadPt2(a);
  CompatNeeds n;
  n.runtime = "torch";
  n.overloads_known = true;
  n.format = info.aoti.empty() ? ".pt2 exported program" : ".pt2 AOTInductor package";
  std::set<std::string> ops, devices, archs, versions;
  for (const Pt2Model& m : info.models) {
    if (!n.pt2_schema && m.schema_major && m.schema_minor) n.pt2_schema = {*m.schema_major, *m.schema_minor};
    if (n.torch_version.empty()) n.torch_version = m.torch_version;
    for (const OperatorUse& u : m.operators) {
      const size_t ns = u.name.find("::");
      // Higher-order operators (torch.ops.higher_order.cond) are Python's, not the registry's.
      if (ns == std::string::npos || u.name.compare(0, ns, "higher_order") == 0) continue;
      ops.insert(EndsWith(u.name, ".default") ? u.name.substr(0, u.name.size() - 8) : u.name);
    }
    for (const Pt2Tensor& t : m.tensors) {
      if (!t.device.empty() && t.device != "cpu") devices.insert(t.device);
    }
  }
  for (const Pt2AotiModel& m : info.aoti) AddAoti(a, m, n, archs, versions);
  if (info.models.empty() && info.aoti.empty()) n.notes.push_back("no program and no AOTInductor model could be read");
  n.aoti = !info.aoti.empty();
  if (info.layout == "early-exported-program" && a.Has("version")) {
    try {
      std::string v = a.Read("version", 64);
      while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' ')) v.pop_back();
      n.pt2_early_version = v;
    } catch (const Error& e) {
      n.notes.push_back(std::string("its version record could not be read: ") + e.what());
    }
  }
  n.operators.assign(ops.begin(), ops.end());
  n.devices.assign(devices.begin(), devices.end());
  n.cuda_archs.assign(archs.begin(), archs.end());
  n.symbol_versions.assign(versions.begin(), versions.end());
  AddZipDamage(a, n);
  return n;
}

}  // namespace tsctl
