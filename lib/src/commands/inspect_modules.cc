// inspect's module tree: the modules, parameters, buffers and attributes
// pickled in data.pkl (typed by the classes the code declares), and the
// tensors and values in constants.pkl.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "inspect_internal.h"
#include "tsctl/error.h"
#include "tsctl/pickle.h"
#include "../archive/storage_types.h"

namespace tsctl::inspect_internal {
namespace {

std::vector<int64_t> IntTuple(const PyRef& v) {
  std::vector<int64_t> out;
  if (!v) return out;
  for (const PyRef& i : v->items) {
    if (i && i->kind == PyKind::kInt) out.push_back(i->integer);
  }
  return out;
}

bool IsTensor(const PyRef& v) {
  return v && v->kind == PyKind::kObject &&
         (v->IsGlobal("torch._utils", "_rebuild_tensor_v2") || v->IsGlobal("torch._utils", "_rebuild_qtensor") ||
          v->IsGlobal("torch._utils", "_rebuild_tensor") || v->IsGlobal("torch._utils", "_rebuild_parameter"));
}

// Unwraps pickler helpers that only re-tag a value.
PyRef Unwrap(PyRef v) {
  for (int i = 0; i < 8 && v && v->kind == PyKind::kObject && !v->items.empty(); ++i) {
    std::string q = v->QualifiedName();
    if (q == "torch.jit._pickle.restore_type_tag" || q == "torch.jit._pickle.build_intlist" ||
        q == "torch.jit._pickle.build_tensorlist" || q == "torch.jit._pickle.build_doublelist" ||
        q == "torch.jit._pickle.build_boollist" || q == "torch.jit._pickle.build_genericlist") {
      v = v->items[0];
    } else {
      break;
    }
  }
  return v;
}

std::optional<TensorInfo> ReadTensor(const PyRef& v, const std::string& name, const std::string& role) {
  if (!IsTensor(v)) return std::nullopt;
  if (v->IsGlobal("torch._utils", "_rebuild_parameter")) {
    if (v->items.empty()) return std::nullopt;
    auto t = ReadTensor(v->items[0], name, role);
    if (t && v->items.size() > 1 && v->items[1]->kind == PyKind::kBool) t->requires_grad = v->items[1]->boolean;
    return t;
  }
  const auto& args = v->items;
  if (args.size() < 4) return std::nullopt;
  TensorInfo t;
  t.name = name;
  t.role = role;
  uint64_t elem = 0;  // bytes per element, from the storage class
  t.quantized = v->IsGlobal("torch._utils", "_rebuild_qtensor");
  const PyRef& pid = args[0];
  if (pid && pid->kind == PyKind::kPersistentId && !pid->items.empty() && pid->items[0]->kind == PyKind::kTuple) {
    const auto& id = pid->items[0]->items;  // ('storage', torch.FloatStorage, key, location, numel)
    if (id.size() >= 4) {
      const PyRef& cls = id[1];
      const StorageDtype* dtype = DtypeOfStorage(cls->name);
      t.dtype = dtype ? dtype->name : cls->QualifiedName();
      elem = dtype ? dtype->size : 0;
      if (id[2]->kind == PyKind::kString) t.storage_key = id[2]->str;
      if (id[3]->kind == PyKind::kString) t.device = id[3]->str;
    }
  }
  if (args[1]->kind == PyKind::kInt) t.storage_offset = args[1]->integer;
  t.shape = IntTuple(args[2]);
  t.stride = IntTuple(args[3]);
  size_t rg = t.quantized ? 5 : 4;
  if (args.size() > rg && args[rg]->kind == PyKind::kBool) t.requires_grad = args[rg]->boolean;
  t.numel = Numel(t.shape);
  t.bytes = t.numel * elem;
  return t;
}

class TreeBuilder {
 public:
  TreeBuilder(const std::map<std::string, const ClassInfo*>& classes, std::vector<std::string>& warnings)
      : classes_(classes), warnings_(warnings) {}

  ModuleInfo Build(const PyRef& root) {
    ModuleInfo m;
    Fill(root, "", "", m, 0);
    return m;
  }

  // Tensors found anywhere inside `v` (lists, tuples, dicts, object state).
  void CollectTensors(const PyRef& value, const std::string& path, const std::string& role,
                      std::vector<TensorInfo>& out, int depth) {
    PyRef v = Unwrap(value);
    if (!v || depth > 64) return;
    if (auto t = ReadTensor(v, path, role)) {
      out.push_back(*t);
      return;
    }
    // A container the memo shares is walked once: sharing can otherwise
    // expand exponentially.
    if (!walked_.insert(v.get()).second) return;
    switch (v->kind) {
      case PyKind::kList:
      case PyKind::kTuple:
        for (size_t i = 0; i < v->items.size(); ++i) CollectTensors(v->items[i], path + "." + std::to_string(i), role, out, depth + 1);
        break;
      case PyKind::kDict:
        for (const auto& [k, val] : v->entries) {
          std::string key = k && k->kind == PyKind::kString ? k->str : Repr(k, 40);
          CollectTensors(val, path + "." + key, role, out, depth + 1);
        }
        break;
      case PyKind::kObject:
        if (v->state) CollectTensors(v->state, path, role, out, depth + 1);
        break;
      default:
        break;
    }
  }

 private:
  void Fill(const PyRef& value, const std::string& name, const std::string& path, ModuleInfo& m, int depth) {
    PyRef obj = Unwrap(value);
    m.name = name;
    m.path = path;
    m.type = obj ? obj->QualifiedName() : std::string();
    if (depth > 200) {
      warnings_.push_back("module tree deeper than 200 levels; cut at " + path);
      return;
    }
    if (obj) {
      auto [at, fresh] = module_at_.emplace(obj.get(), path);
      if (!fresh) {
        warnings_.push_back("module " + (path.empty() ? std::string("(root)") : path) + " is the same object as " +
                            (at->second.empty() ? std::string("(root)") : at->second) + "; shown once");
        return;
      }
    }
    auto cls_it = classes_.find(m.type);
    const ClassInfo* cls = cls_it == classes_.end() ? nullptr : cls_it->second;
    auto declared = [&](const std::string& attr) -> std::string {
      if (cls) {
        for (const AttributeInfo& a : cls->attributes) {
          if (a.name == attr) return a.type;
        }
      }
      return {};
    };
    auto join = [&](const std::string& attr) { return path.empty() ? attr : path + "." + attr; };
    if (!obj || obj->kind != PyKind::kObject || !obj->state || obj->state->kind != PyKind::kDict) {
      // A class with __setstate__: its state is whatever __getstate__ returned.
      if (obj && obj->state) {
        CollectTensors(obj->state, join("__getstate__"), "attribute", m.tensors, 0);
        m.attributes.push_back({"__getstate__", "state", Repr(obj->state, 120)});
      }
      return;
    }
    for (const auto& [k, raw] : obj->state->entries) {
      if (!k || k->kind != PyKind::kString) continue;
      const std::string& attr = k->str;
      PyRef v = Unwrap(raw);
      if (IsTensor(v)) {
        std::string role = "attribute";
        if (cls && std::count(cls->parameters.begin(), cls->parameters.end(), attr)) role = "parameter";
        if (cls && std::count(cls->buffers.begin(), cls->buffers.end(), attr)) role = "buffer";
        if (auto t = ReadTensor(v, join(attr), role)) m.tensors.push_back(*t);
        continue;
      }
      std::string qn = v ? v->QualifiedName() : "";
      if (v && v->kind == PyKind::kObject && qn.rfind("__torch__.", 0) == 0 &&
          qn.rfind("__torch__.torch.classes.", 0) != 0) {
        ModuleInfo child;
        Fill(v, attr, join(attr), child, depth + 1);
        m.children.push_back(std::move(child));
        continue;
      }
      std::string type = declared(attr);
      if (type.empty()) type = v && v->kind == PyKind::kObject ? qn : KindName(v);
      m.attributes.push_back({attr, type, Repr(v, 120)});
      CollectTensors(v, join(attr), "attribute", m.tensors, 0);
    }
  }

  static std::string KindName(const PyRef& v) {
    if (!v) return "?";
    switch (v->kind) {
      case PyKind::kNone: return "NoneType";
      case PyKind::kBool: return "bool";
      case PyKind::kInt: return "int";
      case PyKind::kFloat: return "float";
      case PyKind::kString: return "str";
      case PyKind::kBytes: return "bytes";
      case PyKind::kList: return "List";
      case PyKind::kTuple: return "Tuple";
      case PyKind::kDict: return "Dict";
      case PyKind::kSet: return "Set";
      default: return "object";
    }
  }

  const std::map<std::string, const ClassInfo*>& classes_;
  std::vector<std::string>& warnings_;
  std::set<const PyValue*> walked_;                  // containers CollectTensors has seen
  std::map<const PyValue*, std::string> module_at_;  // module objects Fill has seen, by path
};

}  // namespace

uint64_t Numel(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  return n;
}

void ReadModules(const Archive& a, ArchiveInfo& info) {
  std::map<std::string, const ClassInfo*> by_name;
  for (const ClassInfo& c : info.classes) by_name[c.qualified_name] = &c;

  std::vector<std::string> warnings;
  TreeBuilder builder(by_name, warnings);
  if (info.format.legacy) {
    ReadLegacyModule(a, info);
  } else if (a.Has("data.pkl")) {
    try {
      info.module = builder.Build(ParsePickle(a.Read("data.pkl")));
    } catch (const Error& err) {
      info.warnings.push_back(std::string("data.pkl: ") + err.what());
    }
  }
  if (a.Has("constants.pkl")) {
    try {
      PyRef c = Unwrap(ParsePickle(a.Read("constants.pkl")));
      if (c->kind == PyKind::kTuple) {
        for (size_t i = 0; i < c->items.size(); ++i) {
          std::string name = "c" + std::to_string(i);
          if (IsTensor(c->items[i])) {
            builder.CollectTensors(c->items[i], name, "constant", info.constants, 0);
          } else {
            info.other_constants.push_back({name, c->items[i]->QualifiedName(), Repr(c->items[i], 120)});
            // The tensors inside one (an XNNPACK or quantized op context's
            // weights, pickled in its __setstate__ tuple) are constants too.
            builder.CollectTensors(c->items[i], name, "constant", info.constants, 0);
          }
        }
      }
    } catch (const Error& err) {
      info.warnings.push_back(std::string("constants.pkl: ") + err.what());
    }
  }
  for (std::string& w : warnings) info.warnings.push_back(std::move(w));
}

}  // namespace tsctl::inspect_internal
