#include "tsctl/validate.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <unistd.h>

#include "../text/json_util.h"
#include "tsctl/archive.h"
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "../archive/json_input.h"
#include "apply_inputs.h"
#include "check_before_load.h"
#include "tsctl/operators.h"
#include "tsctl/stamp.h"
#include "tsctl/torch_backend.h"
#include "torch_child.h"
#include "tsctl/pte.h"
#include "validate_internal.h"

namespace tsctl {
void CheckAllowedOps(const std::vector<std::string>& ops, const std::vector<std::string>& allowed, const std::string& id,
                     const std::string& how, std::vector<CheckResult>& out) {
  const bool overload_known = id == check::kTorchOps;
  std::vector<std::string> bad;
  for (const auto& op : ops) {
    if (!OperatorAllowed(op, allowed, overload_known || op != OperatorBaseName(op))) bad.push_back(op);
  }
  std::string list;
  for (const auto& b : bad) list += (list.empty() ? "" : ", ") + b;
  out.push_back({id, bad.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 bad.empty() ? std::to_string(ops.size()) + " operators" + how + ", all allowed" : "operators not in the allowed list: " + list});
}


const char* CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass: return "PASS";
    case CheckStatus::kWarn: return "WARN";
    case CheckStatus::kFail: return "FAIL";
    case CheckStatus::kSkip: return "SKIP";
  }
  return "?";
}

int ArchiveReport::Count(CheckStatus status) const {
  int n = 0;
  for (const auto& c : checks) n += c.status == status;
  return n;
}

const char* ArchiveResultName(ArchiveResult result) {
  switch (result) {
    case ArchiveResult::kPassed: return "PASSED";
    case ArchiveResult::kFailed: return "FAILED";
    case ArchiveResult::kNotRun: return "NOT RUN";
  }
  return "?";
}

ArchiveResult ArchiveReport::Result(bool strict) const {
  if (Count(CheckStatus::kFail) > 0 || (strict && Count(CheckStatus::kWarn) > 0)) return ArchiveResult::kFailed;
  return not_run.empty() ? ArchiveResult::kPassed : ArchiveResult::kNotRun;
}

ArchiveResult ValidationReport::Result() const {
  if (!not_checked.empty()) return ArchiveResult::kFailed;  // nothing checked is never a pass
  ArchiveResult result = ArchiveResult::kPassed;
  for (const auto& a : archives) {
    const ArchiveResult r = a.Result(strict);
    if (r == ArchiveResult::kFailed) return r;
    if (r == ArchiveResult::kNotRun) result = r;
  }
  return result;
}

bool ValidationReport::Passed() const {
  const ArchiveResult r = Result();
  return r == ArchiveResult::kPassed || (r == ArchiveResult::kNotRun && allow_not_run);
}

std::vector<std::string> ReadOperatorList(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::kIo, "--allow-ops: cannot read " + path + ": " + std::strerror(errno));
  std::vector<std::string> ops;
  std::string line;
  while (std::getline(in, line)) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos) continue;
    ops.push_back(line.substr(b, e - b + 1));
  }
  return ops;
}

bool OperatorAllowed(const std::string& op, const std::vector<std::string>& allowed, bool overload_known) {
  std::string base = OperatorBaseName(op);
  for (const auto& a : allowed) {
    if (a == op || a == base) return true;
    if (!overload_known && base == op && OperatorBaseName(a) == op) return true;
  }
  return false;
}

ModelCheckOptions ModelCheckBase(const Archive& archive, const std::string& path, const ValidateOptions& options) {
  ModelCheckOptions m;
  static_cast<RunSpec&>(m) = options;
  m.path = path;
  // LibTorch opens the file tsctl just checked (the descriptor, inherited by
  // the child), not whatever the path names by then.
  m.load_path = CheckedLoadPath(archive);
  m.run = options.run;
  m.rtol = options.rtol;
  m.atol = options.atol;
  m.reference_path = options.reference_path;
  ChooseCalls(options, m);
  return m;
}

double ValidateTimeout(uint64_t bytes) {
  constexpr double kFixed = 60, kPerGiB = 60;
  return std::ceil(kFixed + kPerGiB * static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << 30));
}

}  // namespace tsctl
