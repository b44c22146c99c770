// diff of .pt2 archives: the sections TorchScript archives get, filled from
// the programs (tsctl/pt2.h). modules: each program's signature (user inputs
// and outputs, symbols, versions); parameters and constants: weights by value,
// read from their raw files with the config's dtype; code: the printed graph
// of each program, line by line (tsctl graph; class "graph", method
// "(<model>)"); operators: the graph targets.
#include <algorithm>
#include <map>
#include <set>

#include "diff_internal.h"
#include "tsctl/error.h"
#include "tsctl/pt2.h"
#include "tsctl/text_diff.h"

namespace tsctl::diff_internal {
namespace {

const std::vector<Pt2Model>& Models(const ArchiveInfo& info) {
  static const std::vector<Pt2Model> kNone;
  return info.pt2 ? info.pt2->models : kNone;
}

std::map<std::string, const Pt2Model*> ByName(const ArchiveInfo& info) {
  std::map<std::string, const Pt2Model*> out;
  for (const Pt2Model& m : Models(info)) out.emplace(m.name, &m);
  return out;
}

std::string Pt2ValueDiffText(const Pt2Value& v) {
  std::string s = v.kind;
  if (!v.dtype.empty()) s += " " + v.dtype;
  if (v.kind == "tensor") {
    std::string shape;
    for (const std::string& d : v.shape) shape += (shape.empty() ? "" : ", ") + d;
    s += " [" + shape + "]";
  }
  if (!v.device.empty()) s += " " + v.device;
  if (!v.value.empty()) s += " = " + v.value;
  return s;
}

// Inputs or outputs compared by position: a rename is a change of "name".
void DiffValues(const std::string& model, const char* what, const std::vector<Pt2Value>& a,
                const std::vector<Pt2Value>& b, DiffResult& r) {
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    std::string path = model + "." + what + "[" + std::to_string(i) + "]";
    if (i >= b.size()) {
      r.modules.push_back({path, what, ChangeKind::kRemoved, {{"value", a[i].name + ": " + Pt2ValueDiffText(a[i]), ""}}});
    } else if (i >= a.size()) {
      r.modules.push_back({path, what, ChangeKind::kAdded, {{"value", "", b[i].name + ": " + Pt2ValueDiffText(b[i])}}});
    } else {
      ModuleChange c{path, what, ChangeKind::kChanged, {}};
      if (a[i].name != b[i].name) c.fields.push_back({"name", a[i].name, b[i].name});
      if (Pt2ValueDiffText(a[i]) != Pt2ValueDiffText(b[i])) c.fields.push_back({"type", Pt2ValueDiffText(a[i]), Pt2ValueDiffText(b[i])});
      if (!c.fields.empty()) r.modules.push_back(std::move(c));
    }
  }
}

std::string SymbolRange(const Pt2Symbol& s) {
  return (s.min ? std::to_string(*s.min) : "-inf") + ".." + (s.max ? std::to_string(*s.max) : "inf");
}

void DiffSymbols(const Pt2Model& a, const Pt2Model& b, DiffResult& r) {
  std::map<std::string, std::string> ra, rb;
  for (const Pt2Symbol& s : a.symbols) ra[s.name] = SymbolRange(s);
  for (const Pt2Symbol& s : b.symbols) rb[s.name] = SymbolRange(s);
  for (const auto& [name, range] : ra) {
    auto it = rb.find(name);
    if (it == rb.end()) {
      r.modules.push_back({a.name + ".symbol." + name, "symbol", ChangeKind::kRemoved, {{"range", range, ""}}});
    } else if (it->second != range) {
      r.modules.push_back({a.name + ".symbol." + name, "symbol", ChangeKind::kChanged, {{"range", range, it->second}}});
    }
  }
  for (const auto& [name, range] : rb) {
    if (!ra.count(name)) r.modules.push_back({b.name + ".symbol." + name, "symbol", ChangeKind::kAdded, {{"range", "", range}}});
  }
}

TensorInfo AsTensorInfo(const Pt2Tensor& t) {
  TensorInfo x;
  x.name = t.name;
  x.role = t.role;
  x.dtype = t.dtype;
  x.shape = t.shape;
  x.stride = t.stride;
  x.storage_offset = t.storage_offset;
  // StorageRecord finds "data/" + key; the early layout's weights sit in a
  // nested torch.save archive: no key, values not compared.
  if (t.file_present && t.file.rfind("data/", 0) == 0 && !t.use_pickle) x.storage_key = t.file.substr(5);
  x.device = t.device;
  x.numel = t.numel;
  x.bytes = t.bytes;
  x.requires_grad = t.requires_grad;
  return x;
}

}  // namespace

void DiffPt2Signature(const ArchiveInfo& ia, const ArchiveInfo& ib, DiffResult& r) {
  auto ma = ByName(ia), mb = ByName(ib);
  for (const auto& [name, a] : ma) {
    auto it = mb.find(name);
    if (it == mb.end()) {
      r.modules.push_back({name, "program", ChangeKind::kRemoved, {{"record", a->record, ""}}});
      continue;
    }
    const Pt2Model& b = *it->second;
    DiffValues(name, "input", a->inputs, b.inputs, r);
    DiffValues(name, "output", a->outputs, b.outputs, r);
    DiffSymbols(*a, b, r);
  }
  for (const auto& [name, b] : mb) {
    if (!ma.count(name)) r.modules.push_back({name, "program", ChangeKind::kAdded, {{"record", "", b->record}}});
  }
}

void DiffPt2Tensors(const Side& a, const ArchiveInfo& ia, const Side& b, const ArchiveInfo& ib, bool constants,
                    const DiffOptions& options, std::vector<TensorChange>& out) {
  // Programs of one archive share their weights by name; each tensor once.
  auto collect = [&](const ArchiveInfo& info, std::vector<TensorInfo>& store) {
    std::set<std::string> seen;
    for (const Pt2Model& m : Models(info)) {
      for (const Pt2Tensor& t : m.tensors) {
        if ((t.role == "constant") != constants || t.role == "custom_obj" || !seen.insert(t.name).second) continue;
        store.push_back(AsTensorInfo(t));
      }
    }
  };
  std::vector<TensorInfo> sa, sb;
  collect(ia, sa);
  collect(ib, sb);
  // Without a file of raw bytes on either side (the early layout), equal
  // dtype and shape is all that can be compared: such pairs are left out
  // (their file is compared as a record).
  std::map<std::string, const TensorInfo*> keyless_b;
  for (const TensorInfo& t : sb) {
    if (t.storage_key.empty()) keyless_b[t.name + "\n" + t.role] = &t;
  }
  std::set<std::string> same;
  for (const TensorInfo& t : sa) {
    auto it = keyless_b.find(t.name + "\n" + t.role);
    if (t.storage_key.empty() && it != keyless_b.end() && it->second->dtype == t.dtype && it->second->shape == t.shape) {
      same.insert(it->first);
    }
  }
  std::vector<const TensorInfo*> ta, tb;
  for (const TensorInfo& t : sa) {
    if (!t.storage_key.empty() || !same.count(t.name + "\n" + t.role)) ta.push_back(&t);
  }
  for (const TensorInfo& t : sb) {
    if (!t.storage_key.empty() || !same.count(t.name + "\n" + t.role)) tb.push_back(&t);
  }
  DiffTensorLists(a, ta, b, tb, options, out);
}

void DiffTensorsAcrossFormats(const Side& a, const ArchiveInfo& ia, const Side& b, const ArchiveInfo& ib,
                              const DiffOptions& options, std::vector<TensorChange>& out) {
  auto collect = [](const ArchiveInfo& info, std::vector<TensorInfo>& store) {
    if (!info.pt2) {
      std::vector<const TensorInfo*> tree;
      if (info.module) Flatten(*info.module, tree);
      for (const TensorInfo* t : tree) store.push_back(*t);
      return;
    }
    std::set<std::string> seen;
    for (const Pt2Model& m : Models(info)) {
      for (const Pt2Tensor& t : m.tensors) {
        if (t.role == "constant" || t.role == "custom_obj" || !seen.insert(t.name).second) continue;
        store.push_back(AsTensorInfo(t));
      }
    }
  };
  std::vector<TensorInfo> sa, sb;
  collect(ia, sa);
  collect(ib, sb);
  std::map<std::string, const TensorInfo*> by_name;
  for (const TensorInfo& t : sa) by_name.emplace(t.name, &t);
  auto state = [](const std::string& role) { return role == "parameter" || role == "buffer"; };
  for (TensorInfo& y : sb) {
    auto it = by_name.find(y.name);
    if (it == by_name.end() || !state(it->second->role) || !state(y.role)) continue;
    y.role = it->second->role;
    y.requires_grad = it->second->requires_grad;
  }
  std::vector<const TensorInfo*> ta, tb;
  for (const TensorInfo& t : sa) ta.push_back(&t);
  for (const TensorInfo& t : sb) tb.push_back(&t);
  DiffTensorLists(a, ta, b, tb, options, out);
}

void DiffPt2Graphs(const Archive& a, const Archive& b, const DiffOptions& options, DiffResult& r) {
  auto graphs = [&](const Archive& x, const char* side) {
    std::map<std::string, std::string> out;
    for (const auto& [name, record] : Pt2ProgramRecords(x)) {
      try {
        out[name] = Pt2GraphText(x, name);
      } catch (const Error& e) {
        r.warnings.push_back(std::string(side) + ": " + e.what());
      }
    }
    return out;
  };
  std::map<std::string, std::string> ga = graphs(a, "A"), gb = graphs(b, "B");
  for (const auto& [name, text] : ga) {
    auto it = gb.find(name);
    if (it == gb.end()) {
      r.code.push_back({"graph", "(" + name + ")", ChangeKind::kRemoved, "", ""});
    } else if (it->second != text) {
      r.code.push_back({"graph", "(" + name + ")", ChangeKind::kChanged, UnifiedDiff(text, it->second, options.context_lines), ""});
    }
  }
  for (const auto& [name, text] : gb) {
    if (!ga.count(name)) r.code.push_back({"graph", "(" + name + ")", ChangeKind::kAdded, "", ""});
  }
}

void DiffPt2Operators(const ArchiveInfo& ia, const ArchiveInfo& ib, DiffResult& r) {
  std::vector<std::string> a = ia.operators.Names(), b = ib.operators.Names();
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(r.operators_added));
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(r.operators_removed));
}

void DiffPt2Format(const ArchiveInfo& ia, const ArchiveInfo& ib, DiffResult& r) {
  auto field = [&](const std::string& name, const std::string& x, const std::string& y) {
    if (x != y) r.format.push_back({name, x, y});
  };
  const Pt2Info none;
  const Pt2Info& a = ia.pt2 ? *ia.pt2 : none;
  const Pt2Info& b = ib.pt2 ? *ib.pt2 : none;
  field("pt2 layout", a.layout, b.layout);
  field("archive_version", a.archive_version, b.archive_version);
  auto ma = ByName(ia), mb = ByName(ib);
  for (const auto& [name, x] : ma) {
    auto it = mb.find(name);
    if (it == mb.end()) continue;
    auto schema = [](const Pt2Model& m) {
      return m.schema_major ? std::to_string(*m.schema_major) + "." + (m.schema_minor ? std::to_string(*m.schema_minor) : "?") : "none";
    };
    field(name + " schema_version", schema(*x), schema(*it->second));
    field(name + " torch_version", x->torch_version, it->second->torch_version);
  }
}

}  // namespace tsctl::diff_internal
