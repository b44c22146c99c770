// The pte.* checks: an ExecuTorch program (.pte), data file (.ptd) or
// bundled program (.bpte) judged without running it. The reader verifies
// the flatbuffer and bounds every header and segment (pte.format); then
// the external tensors against --data (pte.data), the operators against a
// runtime's kernels (pte.kernels: "Kernel not found" before shipping), the
// delegates against --allow-delegates, and a bundled program's test suites.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "../text/json_util.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/pte.h"
#include "tsctl/source.h"
#include "tsctl/text_util.h"
#include "bench_pte.h"
#include "check_context.h"
#include "validate_internal.h"

namespace tsctl {
namespace {

constexpr size_t kListed = 8;

std::string TrimBlanks(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

std::string FormatSummary(const PteFile& f) {
  std::string s = std::string("ExecuTorch ") + PteKindName(f.kind) + " (" + f.identifier + "), " + HumanBytes(f.file_size);
  if (f.kind == PteKind::kFlatTensor) {
    const size_t n = f.flat_tensor.tensors.size() + f.flat_tensor.named_data.size();
    return s + ", " + std::to_string(n) + " tensors or named blobs; flatbuffer verified, every segment in bounds";
  }
  const PteProgram& p = f.program;  // a .bpte's embedded program too
  s += ", " + std::to_string(p.methods.size()) + " method" + (p.methods.size() == 1 ? "" : "s") + ", " +
       std::to_string(p.segments.size()) + " segment" + (p.segments.size() == 1 ? "" : "s");
  return s + "; flatbuffer verified, every header, segment and index in bounds";
}

// A runtime's operators: one "name.overload" a line ('#' comments), or
// ExecuTorch's selected_operators.yaml (keys under "operators:"; an entry
// with include_all_overloads: true, or without an overload, takes them all).
struct Kernels {
  std::set<std::string> exact;
  std::set<std::string> all_overloads;  // base names
  bool Has(const std::string& key) const {
    if (exact.count(key)) return true;
    const size_t dot = key.find('.', key.find("::") == std::string::npos ? 0 : key.find("::") + 2);
    return all_overloads.count(dot == std::string::npos ? key : key.substr(0, dot)) > 0;
  }
};

Kernels ReadKernels(const std::string& path) {
  std::string text;
  try {
    text = ReadInputFile(path);
  } catch (const Error& e) {
    throw Error(e.kind(), "--kernels " + path + ": " + e.what());
  }
  Kernels k;
  const bool yaml = text.find("operators:") != std::string::npos;
  static const std::regex kYamlKey(R"(^  ([A-Za-z_][\w]*::[\w.]+):\s*$)");
  static const std::regex kAllOverloads(R"(^\s+include_all_overloads:\s*true\s*$)");
  std::string line, last;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch m;
    if (yaml) {
      if (std::regex_match(line, m, kYamlKey)) {
        last = m[1];
        (last.find('.') == std::string::npos ? k.all_overloads : k.exact).insert(last);
      } else if (!last.empty() && std::regex_match(line, kAllOverloads)) {
        k.all_overloads.insert(last.substr(0, last.find('.')));
      }
      continue;
    }
    const std::string op = TrimBlanks(line.substr(0, line.find('#')));
    if (op.empty()) continue;
    (op.find('.') == std::string::npos ? k.all_overloads : k.exact).insert(op);
  }
  if (k.exact.empty() && k.all_overloads.empty()) {
    throw Error(ErrorKind::kUsage, "--kernels " + path + ": no operators in it (one name.overload a line, or a "
                                                         "selected_operators.yaml)");
  }
  return k;
}

void CheckKernels(const PteProgram& p, const ValidateOptions& o, std::vector<CheckResult>& out) {
  if (o.pte_kernels_path.empty()) {
    out.push_back({check::kPteKernels, CheckStatus::kSkip,
                   "not checked: pass --kernels FILE (the operators the target runtime registers)"});
    return;
  }
  const Kernels k = ReadKernels(o.pte_kernels_path);
  std::vector<std::string> missing;
  size_t ops = 0;
  for (const PteMethod& m : p.methods) {
    std::vector<std::string> lacking;
    for (const PteOperator& op : m.operators) {
      ++ops;
      if (!k.Has(PteOperatorKey(op))) lacking.push_back(EscapeText(PteOperatorKey(op)));
    }
    if (!lacking.empty()) missing.push_back(EscapeText(m.name) + ": " + JoinSome(lacking, kListed));
  }
  if (!missing.empty()) {
    std::string s;
    for (const std::string& m : missing) s += (s.empty() ? "" : "; ") + m;
    out.push_back({check::kPteKernels, CheckStatus::kFail,
                   "the runtime's kernels (" + o.pte_kernels_path + ") lack what the program calls: " + s});
    return;
  }
  out.push_back({check::kPteKernels, CheckStatus::kPass,
                 std::to_string(ops) + " operator uses in " + std::to_string(p.methods.size()) +
                     " methods, every one registered in " + o.pte_kernels_path});
}

void CheckDelegates(const PteProgram& p, const ValidateOptions& o, std::vector<CheckResult>& out) {
  std::map<std::string, uint64_t> bytes;
  for (const PteMethod& m : p.methods) {
    for (const PteDelegate& d : m.delegates) bytes[d.backend_id] += d.bytes;
  }
  std::vector<std::string> names, refused;
  for (const auto& [id, n] : bytes) {
    names.push_back(EscapeText(id) + " (" + HumanBytes(n) + ")");
    if (o.has_allow_delegates && std::find(o.allow_delegates.begin(), o.allow_delegates.end(), id) == o.allow_delegates.end()) {
      refused.push_back(EscapeText(id));
    }
  }
  if (!o.has_allow_delegates) {
    out.push_back({check::kPteDelegates, CheckStatus::kSkip,
                   (names.empty() ? std::string("no delegates") : "delegates " + JoinSome(names, kListed)) +
                       "; not gated: pass --allow-delegates ID,..."});
  } else if (!refused.empty()) {
    out.push_back({check::kPteDelegates, CheckStatus::kFail, "delegates not allowed: " + JoinSome(refused, kListed)});
  } else {
    out.push_back({check::kPteDelegates, CheckStatus::kPass,
                   names.empty() ? "no delegates" : "every delegate allowed: " + JoinSome(names, kListed)});
  }
}



// pte.data; returns the .ptd the external tensors are in (--data, or the one
// found beside the program) or "" where none is needed or known.
std::string CheckData(const std::string& path, const PteProgram& p, ValidateOptions o, std::vector<CheckResult>& out) {
  const std::vector<std::string> external = PteExternalTensors(p);
  if (external.empty()) {
    out.push_back({check::kPteData, CheckStatus::kSkip,
                   "no tensor stored outside the program" +
                       std::string(o.pte_data_path.empty() ? "" : " (--data " + o.pte_data_path + " not needed)")});
    return "";
  }
  std::string found;
  if (o.pte_data_path.empty()) found = o.pte_data_path = PteDataBeside(path);
  std::vector<std::string> shown;
  for (const std::string& k : external) shown.push_back(EscapeText(k));
  if (o.pte_data_path.empty()) {
    out.push_back({check::kPteData, CheckStatus::kWarn,
                   std::to_string(external.size()) + " tensors are stored outside the program (" + JoinSome(shown, kListed) +
                       "): pass --data FILE.ptd to check that they are there (none is named as the program beside it)"});
    return "";
  }
  const PteFile data = ReadPte(o.pte_data_path);
  if (data.kind != PteKind::kFlatTensor) {
    throw Error(ErrorKind::kUsage, "--data " + o.pte_data_path + ": not a .ptd (it is an ExecuTorch " +
                                       PteKindName(data.kind) + ")");
  }
  const std::set<std::string> keys = PteDataKeys(data);
  std::vector<std::string> missing;
  for (const std::string& k : external) {
    if (!keys.count(k)) missing.push_back(EscapeText(k));
  }
  if (!missing.empty()) {
    out.push_back({check::kPteData, CheckStatus::kFail, o.pte_data_path + " lacks " + JoinSome(missing, kListed)});
    return "";
  }
  out.push_back({check::kPteData, CheckStatus::kPass,
                 "the " + std::to_string(external.size()) + " external tensors are in " + EscapeText(o.pte_data_path) +
                     (found.empty() ? "" : " (found beside the program; --data names another)")});
  return o.pte_data_path;
}

void CheckBundled(const PteFile& f, std::vector<CheckResult>& out) {
  std::set<std::string> methods;
  for (const PteMethod& m : f.program.methods) methods.insert(m.name);
  size_t cases = 0;
  std::vector<std::string> unknown;
  for (const PteTestSuite& s : f.bundled.suites) {
    cases += s.cases.size();
    if (!methods.count(s.method_name)) unknown.push_back(EscapeText(s.method_name));
  }
  if (!unknown.empty()) {
    out.push_back({check::kPteBundled, CheckStatus::kFail, "test suites for methods the program lacks: " + JoinSome(unknown, kListed)});
    return;
  }
  if (cases == 0) {
    out.push_back({check::kPteBundled, CheckStatus::kWarn, "the bundled program carries no test case"});
    return;
  }
  out.push_back({check::kPteBundled, CheckStatus::kPass,
                 std::to_string(f.bundled.suites.size()) + (f.bundled.suites.size() == 1 ? " test suite, " : " test suites, ") +
                     std::to_string(cases) + (cases == 1 ? " case" : " cases") + ", each for a method the program has"});
}

// The file read once for its rows: the bytes validate opened (what the
// runtime is given later), or the path; a file the reader refuses is
// pte.format's FAIL and the other rows' silence.
struct PteRead {
  explicit PteRead(CheckContext& c) {
    try {
      file = c.src ? ReadPteSource(*c.src) : ReadPte(c.path);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kFormat) throw;
      error = e.what();
    }
  }
  std::optional<PteFile> file;
  std::string error;
};

// The program the rows after pte.format judge: null for an unreadable file
// or a .ptd (tensors, no program).
const PteFile* ProgramFile(CheckContext& c) {
  const PteRead& read = c.Facts<PteRead>();
  return read.file && read.file->kind != PteKind::kFlatTensor ? &*read.file : nullptr;
}

void CheckPteFormat(CheckContext& c) {
  const PteRead& read = c.Facts<PteRead>();
  if (!read.file) return c.Add({check::kPteFormat, CheckStatus::kFail, read.error});
  c.Add({check::kPteFormat, CheckStatus::kPass, FormatSummary(*read.file)});
}

void CheckPteData(CheckContext& c) {
  if (const PteFile* f = ProgramFile(c)) {
    if (std::string data = CheckData(c.path, f->program, c.options, c.report.checks); !data.empty()) {
      Json(c.report.details)["pte_data"] = data;
    }
  }
}

void CheckPteKernels(CheckContext& c) {
  if (const PteFile* f = ProgramFile(c)) CheckKernels(f->program, c.options, c.report.checks);
}

void CheckPteDelegates(CheckContext& c) {
  if (const PteFile* f = ProgramFile(c)) CheckDelegates(f->program, c.options, c.report.checks);
}

// code.ops: --allow-ops over the program's operators (not run).
void CheckPteCodeOps(CheckContext& c) {
  const PteFile* f = ProgramFile(c);
  if (!f || !c.options.has_allow_ops) return;
  CheckAllowedOps(PteOperators(f->program), c.options.allow_ops, check::kCodeOps, " (read from the program, not run)",
                  c.report.checks);
}

void CheckPteBundled(CheckContext& c) {
  const PteFile* f = ProgramFile(c);
  if (f && f->kind == PteKind::kBundled) CheckBundled(*f, c.report.checks);
}

}  // namespace

std::vector<std::string> PteOperators(const PteProgram& program) {
  std::vector<std::string> ops;
  for (const PteMethod& m : program.methods) {
    for (const PteOperator& op : m.operators) ops.push_back(PteOperatorKey(op));
  }
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

void PteRun(CheckContext& c) {
  const PteRead& read = c.Facts<PteRead>();
  if (read.file) {
    Json(c.report.details)["executorch"] = {{"kind", PteKindName(read.file->kind)}, {"identifier", read.file->identifier}};
  }
  if (const PteFile* f = ProgramFile(c)) c.report.ops = PteOperators(f->program);
  TimedStep(c.report.checks, [&] { CheckPteRun(c.path, c.options, c.report, c.src); });
}

const std::vector<CheckRow>& PteCheckRows() {
  static const std::vector<CheckRow> kRows = {
      {.id = check::kPteFormat, .blocks_loading = true, .check = CheckPteFormat},
      {.id = check::kPteData, .blocks_loading = true, .check = CheckPteData},
      {.id = check::kPteKernels, .check = CheckPteKernels},
      {.id = check::kPteDelegates, .check = CheckPteDelegates},
      {.id = check::kCodeOps, .check = CheckPteCodeOps, .judges_request = true},  // TorchScript's row's id, in this format's place
      {.id = check::kPteBundled, .check = CheckPteBundled},
      // The runtime's: one run (PteRun) yields them.
      {.id = check::kPteLoad, .stage = CheckRow::Stage::kLoad},
      {.id = check::kPteRun, .stage = CheckRow::Stage::kRun},
      {.id = check::kPteFinite},
      {.id = check::kPteDeterministic},
      {.id = check::kPteCase},
      {.id = check::kPteReference},
  };
  return kRows;
}

}  // namespace tsctl
