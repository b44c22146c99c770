// tsctl compat's rules: what an archive needs (CompatNeeds, read by its
// format's row) against what a runtime registers or a machine has. Each
// rule is the loader's own: torch.jit.load refuses a file-format version
// outside [kMinSupportedFileFormatVersion, kMaxSupportedFileFormatVersion]
// (caffe2/serialize/versions.h), resolves every operator the code calls by
// name in the registry (an overload by the argument types; an older
// archive's call to an operator whose schema changed is rewritten by the
// upgrader registered for it), and creates each custom class object the
// pickles name; torch.export.load refuses another schema major version;
// ExecuTorch's Method::init looks up a kernel for every operator
// ("Missing operator") and a backend for every delegate ("Backend ... is not
// registered").
#include <algorithm>
#include <set>
#include <string>

#include "compat_internal.h"
#include "tsctl/compat.h"
#include "tsctl/escape.h"

namespace tsctl {
namespace {

// Each reason once, in order; names from the archive escaped by the caller.
struct Verdict {
  std::vector<std::string> incompatible, unknown, checked;
  CompatTargetResult Result(const std::string& target) const {
    CompatTargetResult r;
    r.target = target;
    if (!incompatible.empty()) {
      r.verdict = CompatVerdict::kIncompatible;
      r.reasons = incompatible;
      r.reasons.insert(r.reasons.end(), unknown.begin(), unknown.end());
    } else if (!unknown.empty()) {
      r.verdict = CompatVerdict::kUnknown;
      r.reasons = unknown;
    } else {
      r.verdict = CompatVerdict::kCompatible;
      r.reasons = checked;
    }
    return r;
  }
};

std::string RuntimeName(const CompatRuntime& r) {
  if (r.kind.empty()) return "the listed runtime";
  return (r.kind == "torch" ? "torch " : "ExecuTorch ") + r.version;
}


std::string ListedItems(const std::vector<std::string>& items, size_t most = 8) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < most; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > most) out += " and " + std::to_string(items.size() - most) + " more";
  return out;
}

std::string ListSome(const std::vector<std::string>& items, size_t most = 8) {
  std::vector<std::string> escaped;
  for (const std::string& item : items) escaped.push_back(EscapeText(item));
  return ListedItems(escaped, most);
}

// An operator's upgrader that applies to an archive of `version`, or "".
std::string UpgraderFor(const CompatRuntime& r, const std::string& op, std::optional<uint64_t> version) {
  if (!version) return "";
  for (const auto& [name, entries] : r.upgraders) {
    if (name != op && OperatorBase(name) != op) continue;
    for (const auto& [bumped, upgrader] : entries) {
      if (*version < bumped) return name + ": upgrader " + upgrader + " (the archive's version " +
                                    std::to_string(*version) + " predates the change at " + std::to_string(bumped) + ")";
    }
  }
  return "";
}

// "prepacked::linear_clamp_run (in torch 1.13.1, 2.11.0)": where else the
// data has the operator, for a user choosing a runtime.
std::string WithReleases(const CompatRuntime& r, const std::string& op, bool by_name) {
  if (r.kind.empty()) return EscapeText(op);
  std::string in;
  for (const std::string& v : ReleasesWith(r.kind, op, by_name)) in += (in.empty() ? "" : ", ") + v;
  return EscapeText(op) + (in.empty() ? "" : " (in " + r.kind + " " + in + ")");
}


void JudgeOperators(const CompatNeeds& n, const CompatRuntime& r, Verdict& v) {
  const bool exact = n.overloads_known && !r.kind.empty();
  std::vector<std::string> missing, custom, upgraded;
  std::set<std::string> spaces;
  for (const std::string& op : n.operators) {
    const bool found = exact ? r.operators.count(op) > 0 : r.base_names.count(OperatorBase(op)) > 0;
    if (const std::string up = UpgraderFor(r, op, n.file_format); !up.empty()) upgraded.push_back(up);
    if (found) continue;
    // A namespace no release registers is a custom operator library's.
    const std::string ns = op.substr(0, op.find("::"));
    bool known = r.kind == "executorch" || !ReleasesWith(r.kind, op, true).empty();
    for (const std::string& b : r.base_names) known = known || b.compare(0, ns.size() + 2, ns + "::") == 0;
    if (known) {
      missing.push_back(WithReleases(r, op, !exact));
    } else {
      custom.push_back(EscapeText(op));
      spaces.insert(EscapeText(ns));
    }
  }
  const std::string who = RuntimeName(r);
  if (!missing.empty()) {
    v.incompatible.push_back(std::to_string(missing.size()) + " operator(s) not registered in " + who + ": " +
                             ListedItems(missing) + (r.kind == "executorch" ? " (ExecuTorch: \"Missing operator\")" : ""));
  }
  if (!custom.empty()) {
    v.incompatible.push_back("custom operator(s) " + ListedItems(custom) + ": namespace " +
                             ListedItems({spaces.begin(), spaces.end()}) + " is no release's; its library must be loaded "
                             "(tsctl --load-library, torch.ops.load_library)");
  }
  for (const std::string& u : upgraded) v.checked.push_back("operator " + EscapeText(u));
  v.checked.push_back(std::to_string(n.operators.size()) + " operator(s) registered in " + who +
                      (n.overloads_known || n.operators.empty() ? "" : " (by name: code records no overload)"));
}

// A .pt2 or AOTInductor package against a torch release: false where the
// verdict is settled and nothing more is worth saying.
bool JudgePt2(const CompatNeeds& n, const CompatRuntime& r, Verdict& v) {
  const std::string who = RuntimeName(r);
  if ((n.pt2_schema || n.aoti) && !r.pt2_schema) {
    // Data from Python says the schema of every release with torch.export;
    // a dump from C++ (--dump-runtime torch) cannot.
    if (r.version.rfind("1.", 0) == 0 || r.version.rfind("0.", 0) == 0) {
      v.incompatible.push_back(who + " has no torch.export (a .pt2 loads in torch 2.1 and later)");
    } else {
      v.unknown.push_back("the data of " + who + " does not say which .pt2 schema it reads");
    }
    return false;
  }
  if (n.aoti && n.torch_version.empty()) {
    v.unknown.push_back("an AOTInductor package that does not name the torch that built it: its compiled code calls "
                        "that release's C shim, which " + who + " may not export");
  }
  if (n.aoti && !n.torch_version.empty() && MajorMinor(n.torch_version) != MajorMinor(r.version)) {
    v.unknown.push_back("an AOTInductor package built by torch " + EscapeText(n.torch_version) +
                        ": its compiled code calls that release's C shim, which " + who + " may not export");
  }
  if (n.pt2_early_version && r.pt2_schema) {
    // torch.export.load's fallback for the early layout: its `version` record
    // must be "MAJOR.MINOR" with the release's schema major.
    const std::string& ev = *n.pt2_early_version;
    const size_t dot = ev.find('.');
    if (dot == std::string::npos || ev.find('.', dot + 1) != std::string::npos) {
      v.incompatible.push_back("the early .pt2 layout with version record '" + EscapeText(ev) + "', not MAJOR.MINOR: " +
                               who + "'s torch.export.load refuses it (\"Version in the saved file has incorrect "
                               "length\")");
      return false;
    }
    if (ev.substr(0, dot) != std::to_string(r.pt2_schema->first)) {
      v.incompatible.push_back("the early .pt2 layout with version " + EscapeText(ev) + "; " + who + " reads major " +
                               std::to_string(r.pt2_schema->first));
      return false;
    }
  }
  if (n.pt2_schema) {
    const auto [major, minor] = *n.pt2_schema;
    const std::string have = std::to_string(r.pt2_schema->first) + "." + std::to_string(r.pt2_schema->second);
    const std::string got = std::to_string(major) + "." + std::to_string(minor);
    if (major != r.pt2_schema->first && !(major == 0 && minor == 0)) {
      v.incompatible.push_back("schema version " + got + "; " + who + " reads major version " +
                               std::to_string(r.pt2_schema->first) + " only (torch.export.load: SerializeError)");
    } else if (minor > r.pt2_schema->second) {
      v.unknown.push_back("schema version " + got + " is newer than " + who + "'s " + have +
                          ": torch.export.load skips fields it does not know but fails on a kind of value added "
                          "since, and tsctl cannot tell which the program uses");
    } else {
      v.checked.push_back("schema version " + got + " (" + who + " writes " + have + ")");
    }
  }
  return true;
}

void JudgeTorch(const CompatNeeds& n, const CompatRuntime& r, Verdict& v) {
  const std::string who = RuntimeName(r);
  if (n.pt2_schema || n.aoti || n.pt2_early_version) {
    if (!JudgePt2(n, r, v)) return;
  } else if (n.legacy) {
    // import.cpp: a model.json archive goes to LEGACY_deserialize, compiled in
    // only without C10_MOBILE and C10_DISABLE_LEGACY_IMPORT.
    if (!r.legacy_import) {
      v.unknown.push_back("the model.json layout (PyTorch 1.0-1.2): the data does not say whether " + who +
                          " reads it");
    } else if (!*r.legacy_import) {
      v.incompatible.push_back("the model.json layout (PyTorch 1.0-1.2), which " + who +
                               " does not read (built without its legacy importer: \"Legacy model format is not "
                               "supported on mobile\")");
      return;
    }
  } else if (n.file_format && r.file_format) {
    const auto [lo, hi] = *r.file_format;
    if (*n.file_format < lo || *n.file_format > hi) {
      v.incompatible.push_back("file format version " + std::to_string(*n.file_format) + "; " + who + " reads " +
                               std::to_string(lo) + " to " + std::to_string(hi));
    } else {
      v.checked.push_back("file format version " + std::to_string(*n.file_format) + " (" + who + " reads " +
                          std::to_string(lo) + " to " + std::to_string(hi) + ")");
    }
  }
  if (n.bytecode && r.bytecode) {
    // torch.jit.load compiles the code records; bytecode.pkl is what the
    // lite interpreter (_load_for_mobile) runs: said, not judged.
    const auto [lo, hi] = *r.bytecode;
    const bool reads = *n.bytecode >= lo && *n.bytecode <= hi;
    v.checked.push_back("bytecode version " + std::to_string(*n.bytecode) + ": the lite interpreter of " + who +
                        (reads ? " reads it" : " refuses it") + " (" + std::to_string(lo) + " to " + std::to_string(hi) +
                        "; torch.jit.load reads the code records)");
  }
  JudgeOperators(n, r, v);
  std::vector<std::string> classes;
  for (const std::string& c : n.classes) {
    if (!r.classes.count(c)) classes.push_back(c);
  }
  if (!classes.empty()) {
    v.incompatible.push_back("custom class(es) not registered in " + who + ": " + ListSome(classes) +
                             " (objects the archive stores; loading creates them)");
  } else if (!n.classes.empty()) {
    v.checked.push_back(std::to_string(n.classes.size()) + " custom class(es) registered");
  }
}

void JudgeExecuTorch(const CompatNeeds& n, const CompatRuntime& r, Verdict& v) {
  JudgeOperators(n, r, v);
  // Program::load: constants come from the constant segment, else from the
  // inline constant_buffer, which a runtime built with
  // ET_ENABLE_DEPRECATED_CONSTANT_BUFFER=0 refuses (InvalidProgram).
  if (n.pte_constant_buffer && !r.constant_buffer) {
    v.unknown.push_back("its constants are in the inline constant_buffer (the layout before ExecuTorch 0.7); the data "
                        "does not say whether " + RuntimeName(r) + " reads it");
  } else if (n.pte_constant_buffer && !*r.constant_buffer) {
    v.incompatible.push_back("its constants are in the inline constant_buffer (the layout before ExecuTorch 0.7), "
                             "which " + RuntimeName(r) + " was built without (\"PTE file relies on the constant_buffer "
                             "path, which is disabled in this build\"): export it again");
  }
  std::vector<std::string> missing;
  for (const std::string& b : n.backends) {
    if (!r.backends.count(b)) missing.push_back(b);
  }
  if (!missing.empty()) {
    v.incompatible.push_back("backend(s) not registered in " + RuntimeName(r) + ": " + ListSome(missing) +
                             " (ExecuTorch: \"Backend ... is not registered\")");
  } else if (!n.backends.empty()) {
    v.checked.push_back("backend(s) " + ListSome(n.backends) + " registered");
  }
}

}  // namespace

void JudgeHost(const CompatNeeds& n, const CompatHost& host, std::vector<std::string>& incompatible,
               std::vector<std::string>& unknown, std::vector<std::string>& checked);

const char* CompatVerdictName(CompatVerdict v) {
  switch (v) {
    case CompatVerdict::kCompatible: return "compatible";
    case CompatVerdict::kIncompatible: return "incompatible";
    case CompatVerdict::kUnknown: break;
  }
  return "unknown";
}

CompatTargetResult JudgeCompat(const CompatNeeds& n, const CompatTarget& target, const CompatHost& host) {
  Verdict v;
  for (const std::string& note : n.notes) v.unknown.push_back(note);
  if (target.host) {
    JudgeHost(n, host, v.incompatible, v.unknown, v.checked);
    return v.Result(target.label);
  }
  if (!target.runtime) {
    v.unknown.push_back(target.missing);
    return v.Result(target.label);
  }
  const CompatRuntime& r = *target.runtime;
  for (const std::string& d : n.damage) {
    v.incompatible.push_back(d + ": a damaged file, which no runtime's reader loads (tsctl validate --no-load)");
  }
  if (n.runtime.empty()) {
    v.unknown.push_back("this " + n.format + " is not loaded by itself: name the program that uses it");
  } else if (!r.kind.empty() && r.kind != n.runtime) {
    v.incompatible.push_back("this " + n.format + " loads in " +
                             (n.runtime == "torch" ? "torch" : "ExecuTorch's runtime") + ", not in " + RuntimeName(r));
  } else if (r.kind == "executorch") {
    JudgeExecuTorch(n, r, v);
  } else if (r.kind == "torch") {
    JudgeTorch(n, r, v);
  } else {
    JudgeOperators(n, r, v);
    v.checked.push_back("operators only: a list of operators says nothing of versions or classes");
  }
  return v.Result(target.label);
}

int CompatReport::ExitCode() const {
  for (const CompatArchiveResult& a : archives) {
    if (!a.error.empty()) return a.error_exit ? a.error_exit : 1;
  }
  for (const CompatArchiveResult& a : archives) {
    for (const CompatTargetResult& t : a.targets) {
      if (t.verdict != CompatVerdict::kCompatible) return 1;
    }
  }
  return 0;
}

}  // namespace tsctl
