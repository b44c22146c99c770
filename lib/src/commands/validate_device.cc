// validate's ts.device check: where the tensors were stored and whether the
// code pins a CUDA device (a model traced on a GPU records
// `device=torch.device("cuda:0")` as a constant), read without LibTorch.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "validate_internal.h"

namespace tsctl {
namespace {

// Code records: code/**.py (not their .debug_pkl), at most 64 MiB in all.
std::vector<std::string> PinnedCudaDevices(const Archive& a) {
  std::vector<std::string> pinned;
  for (const std::string& name : CodeRecords(a, false)) {
    std::string source;
    try {
      source = a.Read(name);
    } catch (const Error&) {
      continue;  // ts.records / zip.crc report it
    }
    size_t line = 1, from = 0;
    for (size_t at = source.find("torch.device(\"cuda"); at != std::string::npos;
         at = source.find("torch.device(\"cuda", at + 1)) {
      for (size_t i = from; i < at; ++i) line += source[i] == '\n';
      from = at;
      const size_t start = at + 14, end = source.find('"', start);
      const std::string device = source.substr(start, end == std::string::npos ? 6 : std::min<size_t>(end - start, 16));
      pinned.push_back(EscapeText(device) + " at " + EscapeText(name) + ":" + std::to_string(line));
    }
  }
  return pinned;
}

}  // namespace

void CheckDevices(const Archive& a, const std::map<std::string, uint64_t>& stored, std::vector<CheckResult>& out) {
  std::string where;
  uint64_t off_cpu = 0;
  for (const auto& [device, count] : stored) {
    where += (where.empty() ? "" : ", ") + std::to_string(count) + " on " + EscapeText(device);
    if (device != "cpu") off_cpu += count;
  }
  if (where.empty()) where = "no stored tensors";
  const std::vector<std::string> pinned = PinnedCudaDevices(a);
  if (!pinned.empty()) {
    out.push_back({check::kTsDevice, CheckStatus::kWarn,
                   "needs CUDA to run: the code creates tensors on " + JoinSome(pinned, 3) +
                       " (a model traced on a GPU); tensors stored: " + where});
    return;
  }
  out.push_back({check::kTsDevice, CheckStatus::kPass,
                 std::string(off_cpu ? "tensors stored on a GPU load onto the CPU with a map location; " : "") +
                     "no device pinned in the code; tensors stored: " + where});
}

bool IsCudaDevice(const std::string& device) { return device.rfind("cuda", 0) == 0; }

void RequireDeviceName(const std::string& device) {
  if (device == "cpu" || device == "cuda") return;
  const std::string digits = device.size() > 5 && device.rfind("cuda:", 0) == 0 ? device.substr(5) : "";
  if (!digits.empty() && digits.size() <= 4 && digits.find_first_not_of("0123456789") == std::string::npos) return;
  throw Error(ErrorKind::kUsage, "bad --device '" + EscapeText(device) + "' (cpu, cuda or cuda:N)");
}

void JudgeCudaPinning(const std::string& device, std::vector<CheckResult>& out) {
  auto pinned = std::find_if(out.begin(), out.end(), [](const CheckResult& c) {
    return c.id == check::kTsDevice && c.status == CheckStatus::kWarn;
  });
  if (pinned == out.end()) return;
  const bool ran = std::any_of(out.begin(), out.end(), [](const CheckResult& c) {
    return c.id == check::kTorchRun && c.status == CheckStatus::kPass;
  });
  if (IsCudaDevice(device) && ran) {
    // Asked for and given: the device the code names is the one it ran on.
    pinned->status = CheckStatus::kPass;
    const std::string kNeeds = "needs CUDA to run: ";
    std::string what = pinned->message;
    if (what.rfind(kNeeds, 0) == 0) what.erase(0, kNeeds.size());
    pinned->message = "ran on " + device + " (--device): " + what;
    return;
  }
  if (IsCudaDevice(device)) return;
  // A model pinned to CUDA that fails on a machine or LibTorch without
  // CUDA: the machine cannot run it, the archive is not broken.
  for (CheckResult& c : out) {
    if (c.id == check::kTorchRun && c.status == CheckStatus::kFail &&
        (c.message.find("CUDA") != std::string::npos || c.message.find("cuda") != std::string::npos ||
         c.message.find("NVIDIA") != std::string::npos)) {  // 2.x without a driver: "Found no NVIDIA driver"
      c.status = CheckStatus::kSkip;
      c.model_ran = false;
      c.message = "unavailable here: the code needs CUDA (see ts.device) and this LibTorch or machine has none (on a GPU "
                  "machine: --device cuda): " + c.message;
    }
  }
}

}  // namespace tsctl
