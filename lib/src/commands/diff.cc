// `tsctl diff`: runs the sections over two inspected archives.
#include "tsctl/diff.h"
#include "tsctl/operators.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "diff_internal.h"
#include "tsctl/error.h"

namespace tsctl {
namespace {

using diff_internal::Side;

constexpr const char* kSectionNames[kDiffSectionCount] = {"format",    "records", "modules",   "parameters",
                                                          "constants", "code",    "operators", "extra"};

std::string OptText(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "none"; }

std::string Layout(const ArchiveInfo& info) {
  if (info.format.legacy) return "legacy (model.json)";
  if (info.format.has_bytecode) return "mobile (bytecode.pkl)";
  return "torchscript";
}

void DiffFormat(const ArchiveInfo& a, const ArchiveInfo& b, DiffResult& r) {
  auto field = [&](const char* name, const std::string& x, const std::string& y) {
    if (x != y) r.format.push_back({name, x, y});
  };
  field("kind", a.kind, b.kind);
  field("layout", Layout(a), Layout(b));
  field("version", OptText(a.format.version), OptText(b.format.version));
  field("version record", a.format.version_record, b.format.version_record);
  field("bytecode version", OptText(a.format.bytecode_version), OptText(b.format.bytecode_version));
  field("byteorder", a.format.byteorder, b.format.byteorder);
  field("constants.pkl", a.format.has_constants_pkl ? "present" : "absent",
        b.format.has_constants_pkl ? "present" : "absent");
  auto producer = [](const FormatInfo& f) {
    std::string s = f.producer_name;
    if (!f.producer_version.empty()) s += (s.empty() ? "" : " ") + f.producer_version;
    return s.empty() ? std::string("none") : s;
  };
  field("producer", producer(a.format), producer(b.format));
  r.formats_differ = a.kind != b.kind || Layout(a) != Layout(b) || a.format.version != b.format.version;
}

void IndexModules(const ModuleInfo& m, std::map<std::string, const ModuleInfo*>& out, std::vector<std::string>& order) {
  if (out.emplace(m.path, &m).second) order.push_back(m.path);
  for (const ModuleInfo& c : m.children) IndexModules(c, out, order);
}

std::string Parent(const std::string& path) {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

void DiffModules(const ArchiveInfo& a, const ArchiveInfo& b, DiffResult& r) {
  std::map<std::string, const ModuleInfo*> ma, mb;
  std::vector<std::string> oa, ob;
  if (a.module) IndexModules(*a.module, ma, oa);
  if (b.module) IndexModules(*b.module, mb, ob);
  // Types are compared modulo ___torch_mangle_N, as the code section pairs
  // classes: the numbers are TorchScript's compile order, not the model; a
  // class whose code differs is the code section's finding.
  auto norm = [](const std::string& s) { return diff_internal::NormalizeMangle(s); };
  for (const std::string& p : oa) {
    const ModuleInfo& x = *ma.at(p);
    auto it = mb.find(p);
    if (it == mb.end()) {
      if (p.empty() || mb.count(Parent(p))) r.modules.push_back({p, "submodule", ChangeKind::kRemoved, {{"type", x.type, ""}}});
      continue;
    }
    const ModuleInfo& y = *it->second;
    if (norm(x.type) != norm(y.type)) r.modules.push_back({p, "submodule", ChangeKind::kChanged, {{"type", x.type, y.type}}});
    std::map<std::string, const AttributeInfo*> attrs_b;
    for (const AttributeInfo& at : y.attributes) attrs_b.emplace(at.name, &at);
    std::set<std::string> names_a;
    auto join = [&](const std::string& n) { return p.empty() ? n : p + "." + n; };
    for (const AttributeInfo& at : x.attributes) {
      names_a.insert(at.name);
      auto bt = attrs_b.find(at.name);
      if (bt == attrs_b.end()) {
        r.modules.push_back({join(at.name), "attribute", ChangeKind::kRemoved, {{"value", at.value, ""}}});
        continue;
      }
      ModuleChange c{join(at.name), "attribute", ChangeKind::kChanged, {}};
      if (norm(at.type) != norm(bt->second->type)) c.fields.push_back({"type", at.type, bt->second->type});
      if (norm(at.value) != norm(bt->second->value)) c.fields.push_back({"value", at.value, bt->second->value});
      if (!c.fields.empty()) r.modules.push_back(std::move(c));
    }
    for (const AttributeInfo& at : y.attributes) {
      if (!names_a.count(at.name)) r.modules.push_back({join(at.name), "attribute", ChangeKind::kAdded, {{"value", "", at.value}}});
    }
  }
  for (const std::string& p : ob) {
    if (!ma.count(p) && (p.empty() || ma.count(Parent(p)))) {
      r.modules.push_back({p, "submodule", ChangeKind::kAdded, {{"type", "", mb.at(p)->type}}});
    }
  }
}

void DiffConstants(const Side& a, const ArchiveInfo& ia, const Side& b, const ArchiveInfo& ib,
                   const DiffOptions& options, DiffResult& r) {
  std::vector<const TensorInfo*> ta, tb;
  for (const TensorInfo& t : ia.constants) ta.push_back(&t);
  for (const TensorInfo& t : ib.constants) tb.push_back(&t);
  diff_internal::DiffTensorLists(a, ta, b, tb, options, r.constants);
  std::map<std::string, const AttributeInfo*> ob;
  for (const AttributeInfo& c : ib.other_constants) ob.emplace(c.name, &c);
  auto norm = [&](const std::string& s) { return options.ignore_mangle ? diff_internal::NormalizeMangle(s) : s; };
  std::set<std::string> in_a;
  for (const AttributeInfo& c : ia.other_constants) {
    in_a.insert(c.name);
    TensorChange t;
    t.name = c.name;
    t.role = "constant";
    t.dtype_a = c.type;
    auto it = ob.find(c.name);
    if (it == ob.end()) {
      t.kind = ChangeKind::kRemoved;
      t.note = "value " + c.value;
      r.constants.push_back(std::move(t));
      continue;
    }
    t.dtype_b = it->second->type;
    if (norm(c.type) == norm(t.dtype_b) && norm(c.value) == norm(it->second->value)) continue;
    t.note = "value " + c.value + " -> " + it->second->value;
    r.constants.push_back(std::move(t));
  }
  for (const AttributeInfo& c : ib.other_constants) {
    if (in_a.count(c.name)) continue;
    TensorChange t;
    t.name = c.name;
    t.role = "constant";
    t.kind = ChangeKind::kAdded;
    t.dtype_b = c.type;
    t.note = "value " + c.value;
    r.constants.push_back(std::move(t));
  }
}

// The module, parameter, constant, code and operator sections of two
// TorchScript archives.
void DiffTorchScriptSections(const Archive& archive_a, const ArchiveInfo& ia, const Archive& archive_b,
                             const ArchiveInfo& ib, const DiffOptions& options, DiffResult& r) {
  Side a(archive_a), b(archive_b);
  auto run = [&](DiffSection s, auto&& fn) {
    if (options.Enabled(s)) fn();
  };
  run(DiffSection::kModules, [&] { DiffModules(ia, ib, r); });
  run(DiffSection::kParameters, [&] {
    std::vector<const TensorInfo*> ta, tb;
    if (ia.module) diff_internal::Flatten(*ia.module, ta);
    if (ib.module) diff_internal::Flatten(*ib.module, tb);
    diff_internal::DiffTensorLists(a, ta, b, tb, options, r.parameters);
  });
  run(DiffSection::kConstants, [&] { DiffConstants(a, ia, b, ib, options, r); });
  run(DiffSection::kCode, [&] { diff_internal::DiffCode(a, ia, b, ib, options, r); });
  run(DiffSection::kOperators, [&] {
    std::string reason;
    SectionResult& s = r.sections[static_cast<int>(DiffSection::kOperators)];
    if (!DiffOperators(archive_a, archive_b, r, reason)) {
      s.compared = false;
      s.not_compared_reason = reason;
    }
  });
}

// The same sections from the programs of .pt2 archives (diff_pt2.cc); a
// .pt2 against a TorchScript archive compares what the .pt2 side has.
void DiffPt2Sections(const Archive& archive_a, const ArchiveInfo& ia, const Archive& archive_b, const ArchiveInfo& ib,
                     const DiffOptions& options, DiffResult& r) {
  Side a(archive_a), b(archive_b);
  auto run = [&](DiffSection s, auto&& fn) {
    if (options.Enabled(s)) fn();
  };
  diff_internal::DiffPt2Format(ia, ib, r);
  run(DiffSection::kModules, [&] { diff_internal::DiffPt2Signature(ia, ib, r); });
  const bool across = !ia.pt2 || !ib.pt2;  // a TorchScript archive on one side
  run(DiffSection::kParameters, [&] {
    if (across) {
      diff_internal::DiffTensorsAcrossFormats(a, ia, b, ib, options, r.parameters);
    } else {
      diff_internal::DiffPt2Tensors(a, ia, b, ib, false, options, r.parameters);
    }
  });
  run(DiffSection::kConstants, [&] {
    if (!across) return diff_internal::DiffPt2Tensors(a, ia, b, ib, true, options, r.constants);
    SectionResult& s = r.sections[static_cast<int>(DiffSection::kConstants)];
    s.compared = false;
    s.not_compared_reason = "a TorchScript archive's constants (constants.pkl, c0, c1, ...) and a .pt2's lifted "
                            "constants share no names";
  });
  run(DiffSection::kCode, [&] { diff_internal::DiffPt2Graphs(archive_a, archive_b, options, r); });
  run(DiffSection::kOperators, [&] { diff_internal::DiffPt2Operators(ia, ib, r); });
}

ArchiveInfo InspectSide(const Archive& archive) {
  try {
    return Inspect(archive);
  } catch (const Error& e) {
    throw Error(e.kind(), archive.source().Name() + ": " + e.what(), e.detail());
  }
}

}  // namespace

const char* DiffSectionName(DiffSection section) { return kSectionNames[static_cast<int>(section)]; }

DiffSection ParseDiffSection(const std::string& name) {
  std::string all;
  for (int i = 0; i < kDiffSectionCount; ++i) {
    if (name == kSectionNames[i]) return static_cast<DiffSection>(i);
    all += (i ? ", " : "") + std::string(kSectionNames[i]);
  }
  throw Error(ErrorKind::kUsage, "unknown section '" + name + "' (sections: " + all + ")");
}

const char* ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kAdded: return "added";
    case ChangeKind::kRemoved: return "removed";
    case ChangeKind::kChanged: return "changed";
  }
  return "changed";
}

bool DiffResult::Equal() const {
  for (const SectionResult& s : sections) {
    if (s.compared && !s.equal) return false;
  }
  return true;
}

// Operators added and removed, from each archive's static operator list
// (code records, or bytecode.pkl): no LibTorch.
bool DiffOperators(const Archive& archive_a, const Archive& archive_b, DiffResult& r, std::string& reason) {
  std::vector<std::string> a = ListOperators(archive_a).Names();
  std::vector<std::string> b = ListOperators(archive_b).Names();
  if (a.empty() && b.empty()) {
    reason = "neither archive has code or bytecode to read operators from";
    return false;
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(r.operators_added));
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(r.operators_removed));
  return true;
}

DiffResult DiffArchives(const Archive& archive_a, const Archive& archive_b, const DiffOptions& options) {
  const ArchiveInfo ia = InspectSide(archive_a);
  const ArchiveInfo ib = InspectSide(archive_b);
  return DiffArchives(archive_a, ia, archive_b, ib, options);
}

DiffResult DiffArchives(const Archive& archive_a, const ArchiveInfo& ia, const Archive& archive_b,
                        const ArchiveInfo& ib, const DiffOptions& options) {
  DiffResult r;
  r.path_a = archive_a.source().Name();
  r.path_b = archive_b.source().Name();
  r.kind_a = ArchiveKindName(archive_a.kind());
  r.kind_b = ArchiveKindName(archive_b.kind());
  for (const std::string& w : ia.warnings) r.warnings.push_back("A: " + w);
  for (const std::string& w : ib.warnings) r.warnings.push_back("B: " + w);
  Side a(archive_a), b(archive_b);
  DiffFormat(ia, ib, r);  // formats_differ is reported even when the section is off

  diff_internal::StartSections(options, r);
  auto run = [&](DiffSection s, auto&& fn) {
    if (options.Enabled(s)) fn();
  };
  run(DiffSection::kRecords, [&] { diff_internal::DiffRecords(a, b, options, r); });
  if (ia.pt2 || ib.pt2) {
    DiffPt2Sections(archive_a, ia, archive_b, ib, options, r);
  } else {
    DiffTorchScriptSections(archive_a, ia, archive_b, ib, options, r);
  }
  run(DiffSection::kExtra, [&] { diff_internal::DiffExtra(a, b, options, r); });
  diff_internal::FinishSections(options, r);
  return r;
}

namespace diff_internal {

void Flatten(const ModuleInfo& m, std::vector<const TensorInfo*>& out) {
  for (const TensorInfo& t : m.tensors) out.push_back(&t);
  for (const ModuleInfo& c : m.children) Flatten(c, out);
}

void StartSections(const DiffOptions& options, DiffResult& r) {
  for (int i = 0; i < kDiffSectionCount; ++i) {
    SectionResult s;
    s.section = static_cast<DiffSection>(i);
    s.compared = options.sections[i];
    if (!s.compared) s.not_compared_reason = "ignored";
    r.sections.push_back(s);
  }
}

void FinishSections(const DiffOptions& options, DiffResult& r) {
  if (!options.Enabled(DiffSection::kFormat)) r.format.clear();
  auto set = [&](DiffSection s, bool equal) {
    SectionResult& sr = r.sections[static_cast<int>(s)];
    if (sr.compared) sr.equal = equal;
  };
  set(DiffSection::kFormat, r.format.empty());
  bool records_equal = true;
  for (const RecordChange& c : r.records) records_equal &= !c.counts;
  set(DiffSection::kRecords, records_equal);
  set(DiffSection::kModules, r.modules.empty());
  set(DiffSection::kParameters, r.parameters.empty());
  set(DiffSection::kConstants, r.constants.empty());
  set(DiffSection::kCode, r.code.empty());
  set(DiffSection::kOperators, r.operators_added.empty() && r.operators_removed.empty());
  set(DiffSection::kExtra, r.extra.empty());
}

}  // namespace diff_internal

}  // namespace tsctl
