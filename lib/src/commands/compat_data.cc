// tsctl compat's knowledge of runtimes: the data files built into tsctl
// (lib/data/compat/, embedded by CMake into compat_data_files.cc) and the
// files a user names with --target, in one line-based format:
//
//   # a comment
//   runtime torch 2.15.0          the runtime and its version
//   date 2026-11-29               when the data was gathered
//   source PyPI's torch-2.15.0... how
//   file_format 1 10              TorchScript file-format versions torch.jit.load reads
//   bytecode 4 9                  bytecode versions the lite interpreter reads
//   pt2_schema 8 13               the .pt2 schema version torch.export writes and reads
//   legacy_import no              whether torch.jit.load reads the model.json layout
//   constant_buffer no            whether ExecuTorch reads a program's inline constant_buffer
//   class xnnpack.LinearOpContext a registered TorchScript custom class
//   upgrader aten::div.Tensor 4 div_Tensor_0_3
//   backend XnnpackBackend        an ExecuTorch backend
//   kernel aten::add.out v1/6;... an ExecuTorch kernel (name, kernel key)
//   aten::add.Tensor              a registered operator
//
// A list of operators alone (tsctl validate --list-ops's output) is a file
// of this format too: a runtime of unknown kind and version.
#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "compat_internal.h"
#include "tsctl/compat.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"

namespace tsctl {
namespace {

constexpr uint64_t kMaxTargetFileBytes = uint64_t{64} << 20;

std::string Rest(std::istringstream& in) {
  std::string rest;
  std::getline(in >> std::ws, rest);
  return rest;
}

[[noreturn]] void BadLine(const std::string& name, size_t number, const std::string& line) {
  throw Error(ErrorKind::kFormat, name + ":" + std::to_string(number) + ": '" + EscapeText(line.substr(0, 80)) +
                                      "' is neither an operator (ns::name.overload) nor a line of tsctl compat's "
                                      "data format (runtime, file_format, class, upgrader, backend, kernel, ...)");
}

template <typename T>
std::pair<T, T> Pair(std::istringstream& in, const std::string& name, size_t number, const std::string& line) {
  T a{}, b{};
  if (!(in >> a >> b)) BadLine(name, number, line);
  return {a, b};
}

void AddOperator(CompatRuntime& r, const std::string& op) {
  r.operators.insert(op);
  r.base_names.insert(OperatorBase(op));
}

}  // namespace

std::string MajorMinor(const std::string& version) {
  const size_t first = version.find('.');
  return first == std::string::npos ? version : version.substr(0, version.find_first_not_of("0123456789", first + 1));
}

std::string OperatorBase(const std::string& op) {
  const size_t ns = op.find("::");
  const size_t dot = op.find('.', ns == std::string::npos ? 0 : ns + 2);
  return dot == std::string::npos ? op : op.substr(0, dot);
}

CompatRuntime ParseCompatRuntime(const std::string& text, const std::string& name) {
  CompatRuntime r;
  std::istringstream lines(text);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream in(line);
    std::string key;
    if (!(in >> key) || key[0] == '#') continue;
    if (key == "runtime") {
      if (!(in >> r.kind >> r.version)) BadLine(name, number, line);
    } else if (key == "date") {
      r.date = Rest(in);
    } else if (key == "source") {
      r.source = Rest(in);
    } else if (key == "file_format") {
      r.file_format = Pair<uint64_t>(in, name, number, line);
    } else if (key == "bytecode") {
      r.bytecode = Pair<uint64_t>(in, name, number, line);
    } else if (key == "pt2_schema") {
      r.pt2_schema = Pair<int64_t>(in, name, number, line);
    } else if (key == "legacy_import" || key == "constant_buffer") {
      std::string yes;
      if (!(in >> yes) || (yes != "yes" && yes != "no")) BadLine(name, number, line);
      (key == "legacy_import" ? r.legacy_import : r.constant_buffer) = yes == "yes";
    } else if (key == "class") {
      std::string c;
      if (!(in >> c)) BadLine(name, number, line);
      r.classes.insert(c);
    } else if (key == "backend") {
      std::string b;
      if (!(in >> b)) BadLine(name, number, line);
      r.backends.insert(b);
    } else if (key == "upgrader") {
      std::string op, upgrader;
      uint64_t version = 0;
      if (!(in >> op >> version >> upgrader)) BadLine(name, number, line);
      r.upgraders[op].push_back({version, upgrader});
    } else if (key == "kernel") {
      std::string op;
      if (!(in >> op)) BadLine(name, number, line);
      AddOperator(r, op);
    } else if (key.find("::") != std::string::npos && key.find("::") > 0 && !(in >> std::ws).good()) {
      AddOperator(r, key);
    } else {
      BadLine(name, number, line);
    }
  }
  if (r.kind.empty() && r.operators.empty()) {
    throw Error(ErrorKind::kFormat, name + ": lists no operator (a --target file lists one ns::name.overload a line, "
                                           "as `tsctl validate --list-ops` writes)");
  }
  return r;
}

std::vector<std::string> CompatDataNames() {
  std::vector<std::string> names;
  for (const CompatDataFile& f : CompatDataFiles()) names.push_back(f.name);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// Every built-in data file, parsed once, oldest release first.
const std::vector<CompatRuntime>& AllData() {
  static const std::vector<CompatRuntime> kAll = [] {
    std::vector<CompatRuntime> all;
    for (const CompatDataFile& f : CompatDataFiles()) all.push_back(ParseCompatRuntime(f.text, f.name));
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
    return all;
  }();
  return kAll;
}

}  // namespace

std::string CompatDataDate() {
  std::string newest;
  for (const CompatRuntime& r : AllData()) newest = std::max(newest, r.date);
  return newest;
}



std::vector<std::string> ReleasesWith(const std::string& kind, const std::string& op, bool by_name) {
  std::vector<std::string> out;
  for (const CompatRuntime& r : AllData()) {
    if (r.kind == kind && (by_name ? r.base_names.count(OperatorBase(op)) : r.operators.count(op))) out.push_back(r.version);
  }
  return out;
}

std::string CompatLoadNote(const std::string& load_error, const std::string& libtorch_version) {
  // LibTorch's words for what its registry lacks (the importer's
  // "Unknown type name" of a custom class, the compiler's "Unknown builtin
  // op"), and tsctl's own diagnosis of a failed load (op_diagnosis.cc).
  static const std::regex kClass(R"(Unknown type name '__torch__\.torch\.classes\.([A-Za-z0-9_]+\.[A-Za-z0-9_]+)')");
  static const std::regex kOp(R"(Unknown builtin op: ([A-Za-z0-9_]+::[A-Za-z0-9_]+))");
  static const std::regex kOps(R"(operators not registered in this LibTorch: ([A-Za-z0-9_:., ]+))");
  static const std::regex kName(R"([A-Za-z0-9_]+::[A-Za-z0-9_]+)");
  std::smatch m;
  std::vector<std::string> names;
  std::string kind = "operator";
  if (std::regex_search(load_error, m, kClass)) {
    names = {m[1]};
    kind = "custom class";
  } else if (std::regex_search(load_error, m, kOp)) {
    names = {m[1]};
  } else if (std::regex_search(load_error, m, kOps)) {
    const std::string list = m[1];
    for (auto it = std::sregex_iterator(list.begin(), list.end(), kName); it != std::sregex_iterator(); ++it) {
      names.push_back(it->str());
    }
  }
  if (names.empty()) return "";
  // The releases that register the first; the others are named alongside where they agree.
  auto releases = [&](const std::string& what) {
    std::vector<std::string> in;
    for (const CompatRuntime& r : AllData()) {
      if (r.kind == "torch" && (kind == "operator" ? r.base_names.count(what) > 0 : r.classes.count(what) > 0)) {
        in.push_back(r.version);
      }
    }
    return in;
  };
  const std::vector<std::string> in = releases(names[0]);
  std::vector<std::string> same;
  for (const std::string& n : names) {
    if (releases(n) == in) same.push_back(n);
  }
  const bool one = same.size() == 1;
  std::string note = " (" + kind + (one ? " " : "s ") + JoinAll(same) + (one ? " is" : " are") + " not in this LibTorch " +
                     libtorch_version + "; ";
  return note + (in.empty() ? "no torch release tsctl has data for registers " + std::string(one ? "it" : "them") +
                                  ": a custom library's (--load-library)"
                            : std::string(one ? "it is" : "they are") + " in torch " + JoinAll(in)) +
         ": tsctl compat says this without loading)";
}

const CompatRuntime* FindCompatData(const std::string& kind, const std::string& version) {
  // X.Y: the newest X.Y.* gathered; X.Y.Z: that release.
  const bool exact = std::count(version.begin(), version.end(), '.') >= 2;
  const CompatRuntime* best = nullptr;
  for (const CompatRuntime& r : AllData()) {  // oldest first: the last match is the newest
    if (r.kind == kind && (exact ? r.version == version : r.version.rfind(version + ".", 0) == 0)) best = &r;
  }
  return best;
}

CompatNeeds PteProgramNeeds(const PteProgram& program) {
  CompatNeeds n;
  n.runtime = "executorch";
  n.overloads_known = true;
  std::set<std::string> kernels, backends;
  for (const PteMethod& m : program.methods) {
    for (const PteOperator& op : m.operators) kernels.insert(PteOperatorKey(op));
    for (const PteDelegate& d : m.delegates) backends.insert(d.backend_id);
  }
  n.operators.assign(kernels.begin(), kernels.end());
  n.backends.assign(backends.begin(), backends.end());
  // Program::load reads constants from the constant segment, else from the inline constant_buffer.
  n.pte_constant_buffer =
      program.constant_buffers > 0 && (!program.constant_segment || program.constant_segment->offsets.empty());
  return n;
}

PteRuntimeFit FitPteRuntime(const PteProgram& program) {
  PteRuntimeFit fit;
  const std::string linked = PteRuntimeVersion();  // "ExecuTorch 1.5.1"
  const CompatRuntime* data = nullptr;
  for (const CompatRuntime& r : AllData()) {
    if (r.kind != "executorch") continue;
    data = &r;  // oldest first: without the linked one, the newest wins
    if (!linked.empty() && "ExecuTorch " + r.version == linked) {
      fit.linked = true;
      break;
    }
  }
  if (!data) return fit;
  fit.runtime = "ExecuTorch " + data->version;
  const CompatNeeds n = PteProgramNeeds(program);
  fit.operators = n.operators.size();
  fit.backends = n.backends.size();
  for (const std::string& k : n.operators) {
    if (!data->operators.count(k)) fit.missing_kernels.push_back(k);
  }
  for (const std::string& b : n.backends) {
    if (!data->backends.count(b)) fit.missing_backends.push_back(b);
  }
  fit.constant_buffer_refused = n.pte_constant_buffer && data->constant_buffer && !*data->constant_buffer;
  return fit;
}

CompatTarget ResolveCompatTarget(const std::string& spec) {
  static const std::regex kVersion(R"((torch|executorch)==(\d+)\.(\d+)(\.\d+)?)");
  static const char kForms[] =
      "a target is torch==X.Y[.Z], executorch==X.Y[.Z], host, or a file listing a runtime's operators "
      "(one ns::name.overload a line, as `tsctl validate --list-ops` or `tsctl compat --dump-runtime` write)";
  CompatTarget t;
  t.spec = spec;
  t.label = spec;
  if (spec == "host") {
    t.host = true;
    return t;
  }
  std::smatch m;
  if (std::regex_match(spec, m, kVersion)) {
    const std::string kind = m[1], version = spec.substr(kind.size() + 2);
    if (const CompatRuntime* r = FindCompatData(kind, version)) {
      t.runtime = *r;
      t.label = kind + "==" + t.runtime->version;
    } else {
      std::string have;
      for (const std::string& n : CompatDataNames()) {
        if (n.rfind(kind + "-", 0) == 0) have += (have.empty() ? "" : ", ") + n.substr(kind.size() + 1);
      }
      t.missing = "no data for " + spec + " in this tsctl (it has " + kind + " " + (have.empty() ? "none" : have) +
                  "; scripts/gen_compat_data.py gathers a release's, or name a file with its operators)";
    }
    return t;
  }
  if (spec.find("==") != std::string::npos || spec.empty()) {
    throw Error(ErrorKind::kUsage, "--target '" + EscapeText(spec) + "': " + kForms);
  }
  std::ifstream in(spec, std::ios::binary);
  if (!in) throw Error(ErrorKind::kUsage, "--target '" + EscapeText(spec) + "': no such file; " + kForms);
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxTargetFileBytes) {
      throw Error(ErrorKind::kUsage, "--target '" + EscapeText(spec) + "': larger than 64 MiB; " + kForms);
    }
  }
  try {
    t.runtime = ParseCompatRuntime(text, spec);
  } catch (const Error& e) {
    throw Error(ErrorKind::kUsage, "--target " + std::string(e.what()) + "; " + kForms);
  }
  if (!t.runtime->kind.empty()) t.label = t.runtime->kind + "==" + t.runtime->version + " (" + spec + ")";
  return t;
}

}  // namespace tsctl
