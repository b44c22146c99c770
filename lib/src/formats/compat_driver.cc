// tsctl compat's driver: each file opened once as its format, its row's
// `compat` reading what loading it needs, judged against every target
// (commands/compat_judge.cc); and --dump-runtime.
#include <chrono>
#include <ctime>

#include <nlohmann/json.hpp>

#include "../commands/compat_internal.h"
#include "pte_child.h"
#include "tsctl/compat.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/format.h"
#include "tsctl/pte.h"

namespace tsctl {
namespace {

// The runtime this tsctl would load `runtime`'s archives with.
CompatTarget DefaultTarget(const std::string& runtime) {
  if (runtime == "executorch") {
    const std::string pte = PteRuntimeVersion();  // "ExecuTorch 1.5.1"
    if (pte.empty()) {
      CompatTarget t;
      t.spec = t.label = "executorch";
      t.missing = "this tsctl has no ExecuTorch runtime; name one with --target executorch==X.Y.Z";
      return t;
    }
    return ResolveCompatTarget("executorch==" + pte.substr(pte.find(' ') + 1));
  }
  const std::string torch = TSCTL_LIBTORCH_VERSION;
  if (torch.empty()) {
    CompatTarget t;
    t.spec = t.label = "torch";
    t.missing = "this tsctl was built without LibTorch; name a release with --target torch==X.Y";
    return t;
  }
  return ResolveCompatTarget("torch==" + MajorMinor(torch));
}

CompatArchiveResult JudgeFile(const std::string& path, const std::vector<CompatTarget>& targets,
                              const CompatHost& host, uint64_t max_input_bytes) {
  CompatArchiveResult result;
  result.path = path;
  CompatNeeds needs;
  try {
    const OpenedFile file = Open(path, max_input_bytes);
    needs = Need<&Format::compat>(file, "compat")(file);
    result.format = needs.format;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kUsage) throw;
    result.error = e.what();
    // Readers name the file; the report names it once, beside the message.
    if (result.error.rfind(path + ": ", 0) == 0) result.error.erase(0, path.size() + 2);
    result.error_exit = ExitCodeFor(e.kind());
    return result;
  }
  std::vector<CompatTarget> own = targets;
  if (own.empty()) {
    if (!needs.runtime.empty()) own.push_back(DefaultTarget(needs.runtime));
    own.push_back(ResolveCompatTarget("host"));
  }
  for (const CompatTarget& t : own) result.targets.push_back(JudgeCompat(needs, t, host));
  return result;
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

}  // namespace

CompatReport Compat(const CompatRequest& request) {
  std::vector<CompatTarget> targets;
  for (const std::string& spec : request.targets) targets.push_back(ResolveCompatTarget(spec));
  const CompatHost host = ProbeHost();
  CompatReport report;
  for (const std::string& path : request.paths) {
    report.archives.push_back(JudgeFile(path, targets, host, request.max_input_bytes));
  }
  return report;
}

std::string DumpCompatRuntime(const std::string& runtime) {
  if (runtime == "torch") {
    if (std::string(TSCTL_LIBTORCH_VERSION).empty()) {
      throw Error(ErrorKind::kUnavailable, "this tsctl was built without LibTorch (scripts/build.sh builds it with Debian's)");
    }
    const std::string text = LibTorchRegistry();
    const size_t end = text.find('\n');
    return "# What this tsctl's LibTorch registers (tsctl compat --dump-runtime torch)\n" + text.substr(0, end + 1) +
           "date " + Today() + "\n" + text.substr(end + 1);
  }
  if (runtime != "executorch") {
    throw Error(ErrorKind::kUsage, "--dump-runtime '" + EscapeText(runtime) + "': the runtimes are torch and executorch");
  }
  const std::string version = PteRuntimeVersion();
  if (version.empty() || !PteRuntimeBuilt()) {
    throw Error(ErrorKind::kUnavailable, "this tsctl has no ExecuTorch runtime (scripts/install_executorch_sdk.sh, then build again)");
  }
  PteRunRequest request;
  request.registry = true;
  const PteRunOutcome outcome = RunPteChild(request);
  const nlohmann::json r = nlohmann::json::parse(outcome.result, nullptr, false);
  if (r.is_discarded() || !r.is_object() || !r.contains("kernels")) {
    throw Error(ErrorKind::kTorch, "the ExecuTorch runner did not list its registry" +
                                       (outcome.died.empty() ? std::string() : ": it " + outcome.died));
  }
  std::string out = "# What this tsctl's ExecuTorch runtime registers (tsctl compat --dump-runtime executorch)\n";
  out += "runtime executorch " + version.substr(version.find(' ') + 1) + "\n";
  out += "date " + Today() + "\n";
  out += "source tsctl-pte-runner: ExecuTorch's C++ runtime as tsctl links it (get_registered_kernels, get_backend_name)\n";
  if (r.contains("constant_buffer") && r["constant_buffer"].is_boolean()) {
    out += std::string("constant_buffer ") + (r["constant_buffer"].get<bool>() ? "yes" : "no") + "\n";
  }
  for (const auto& b : r["backends"]) out += "backend " + EscapeText(b.get<std::string>()) + "\n";
  for (const auto& k : r["kernels"]) {
    const std::string key = k.value("key", "");
    out += "kernel " + EscapeText(k.value("name", "")) + (key.empty() ? "" : " " + EscapeText(key)) + "\n";
  }
  return out;
}

}  // namespace tsctl
