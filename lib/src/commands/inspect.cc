#include "tsctl/inspect.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/pickle.h"
#include "tsctl/storage_types.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

// extra/ JSON nested deeper than this is shown as text: printing it would
// recurse once per level.
constexpr int kMaxJsonDepth = 64;

struct DtypeFacts {
  const char* name;
  uint64_t size;
};

// Legacy model.json dataType names.
const std::map<std::string, DtypeFacts>& LegacyDtypes() {
  static const std::map<std::string, DtypeFacts> kMap = {
      {"FLOAT", {"float32", 4}}, {"DOUBLE", {"float64", 8}}, {"FLOAT16", {"float16", 2}},
      {"INT64", {"int64", 8}},   {"INT32", {"int32", 4}},    {"INT16", {"int16", 2}},
      {"INT8", {"int8", 1}},     {"UINT8", {"uint8", 1}},    {"BOOL", {"bool", 1}},
  };
  return kMap;
}

std::vector<int64_t> IntTuple(const PyRef& v) {
  std::vector<int64_t> out;
  if (!v) return out;
  for (const PyRef& i : v->items) {
    if (i && i->kind == PyKind::kInt) out.push_back(i->integer);
  }
  return out;
}

uint64_t Numel(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  return n;
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


void ReadFormat(const Archive& a, ArchiveInfo& info) {
  FormatInfo& f = info.format;
  for (const char* rec : {".data/version", "version"}) {
    if (!a.Has(rec)) continue;
    f.version_record = rec;
    try {
      std::string s = a.Read(rec, 64);
      f.version = std::stoll(s);
    } catch (const std::exception& e) {
      info.warnings.push_back(std::string("cannot read the ") + rec + " record: " + e.what());
    }
    break;
  }
  if (a.Has("byteorder")) {
    try { f.byteorder = a.Read("byteorder", 64); } catch (const std::exception& e) { info.warnings.push_back(std::string("byteorder: ") + e.what()); }
  }
  if (a.Has(".data/serialization_id")) {
    try { f.serialization_id = a.Read(".data/serialization_id", 256); } catch (const std::exception& e) { info.warnings.push_back(std::string("serialization_id: ") + e.what()); }
  }
  f.has_constants_pkl = a.Has("constants.pkl");
  f.has_bytecode = a.Has("bytecode.pkl");
  f.legacy = a.kind() == ArchiveKind::kTorchScriptLegacy;
  if (f.has_bytecode) {
    try {
      PyRef bc = ParsePickle(a.Read("bytecode.pkl"));
      if (bc->kind == PyKind::kTuple) {
        for (const PyRef& item : bc->items) {
          if (item->kind == PyKind::kInt && !f.bytecode_version) f.bytecode_version = item->integer;
          if (item->kind == PyKind::kTuple && !item->items.empty() && item->items[0]->kind == PyKind::kString) {
            f.bytecode_methods.push_back(item->items[0]->str);
          }
        }
      }
    } catch (const std::exception& e) {
      info.warnings.push_back(std::string("bytecode.pkl: ") + e.what());
    }
  }
}

void ReadLegacyModule(const Archive& a, ArchiveInfo& info) {
  nlohmann::json model;
  try {
    model = nlohmann::json::parse(a.Read("model.json"));
  } catch (const std::exception& e) {
    info.warnings.push_back(std::string("model.json: ") + e.what());
    return;
  }
  info.format.producer_name = model.value("producerName", "");
  info.format.producer_version = model.value("producerVersion", "");
  if (model.contains("protoVersion") && !info.format.version) {
    try { info.format.version = std::stoll(model["protoVersion"].get<std::string>()); } catch (...) {}
  }
  const nlohmann::json tensors = model.value("tensors", nlohmann::json::array());
  auto tensor_at = [&](const std::string& id, const std::string& name, const std::string& role) {
    TensorInfo t;
    t.name = name;
    t.role = role;
    size_t idx = 0;
    try { idx = std::stoul(id); } catch (...) { return t; }
    if (idx >= tensors.size()) return t;
    const nlohmann::json& j = tensors[idx];
    auto dt = LegacyDtypes().find(j.value("dataType", ""));
    t.dtype = dt != LegacyDtypes().end() ? dt->second.name : j.value("dataType", "");
    for (const auto& d : j.value("dims", nlohmann::json::array())) t.shape.push_back(std::stoll(d.get<std::string>()));
    for (const auto& d : j.value("strides", nlohmann::json::array())) t.stride.push_back(std::stoll(d.get<std::string>()));
    try { t.storage_offset = std::stoll(j.value("offset", "0")); } catch (...) {}
    t.storage_key = j.contains("data") ? j["data"].value("key", "") : "";
    t.device = j.value("device", "cpu");
    t.requires_grad = j.value("requiresGrad", false);
    t.numel = Numel(t.shape);
    t.bytes = t.numel * (dt != LegacyDtypes().end() ? dt->second.size : 0);
    return t;
  };
  std::function<void(const nlohmann::json&, ModuleInfo&, const std::string&)> fill =
      [&](const nlohmann::json& j, ModuleInfo& m, const std::string& path) {
        m.name = j.value("name", "");
        m.path = path;
        m.type = "(legacy module)";
        auto join = [&](const std::string& n) { return path.empty() ? n : path + "." + n; };
        for (const auto& p : j.value("parameters", nlohmann::json::array())) {
          m.tensors.push_back(tensor_at(p.value("tensorId", ""), join(p.value("name", "")),
                                        p.value("isBuffer", false) ? "buffer" : "parameter"));
        }
        for (const auto& at : j.value("attributes", nlohmann::json::array())) {
          if (at.value("type", "") == "Tensor") {
            m.tensors.push_back(tensor_at(at.value("id", ""), join(at.value("name", "")), "attribute"));
          } else {
            m.attributes.push_back({at.value("name", ""), at.value("type", ""), at.value("id", "")});
          }
        }
        for (const auto& sub : j.value("submodules", nlohmann::json::array())) {
          ModuleInfo child;
          fill(sub, child, join(sub.value("name", "")));
          m.children.push_back(std::move(child));
        }
      };
  ModuleInfo root;
  fill(model.value("mainModule", nlohmann::json::object()), root, "");
  root.name.clear();
  info.module = std::move(root);
}

void Flatten(const ModuleInfo& m, std::vector<const TensorInfo*>& out) {
  for (const TensorInfo& t : m.tensors) out.push_back(&t);
  for (const ModuleInfo& c : m.children) Flatten(c, out);
}

}  // namespace

ArchiveInfo Inspect(const Archive& a, const InspectOptions& options) {
  ArchiveInfo info;
  const ByteSource& src = a.source();
  info.path = src.Name();
  info.file_size = src.Size();
  info.kind = ArchiveKindName(a.kind());
  info.root = a.root();

  // Records, with CRCs checked for everything except tensor data.
  std::set<std::string> seen;
  for (const ZipEntry& e : a.layout().entries) {
    RecordInfo r;
    r.name = a.RecordName(e);
    r.header_offset = e.local_header_offset;
    r.data_offset = e.data_offset;
    r.size = e.uncompressed_size;
    r.compressed_size = e.compressed_size;
    r.method = e.method;
    r.crc32 = e.crc32;
    r.aligned = e.local_header_error.empty() && e.data_offset % 64 == 0;
    r.error = e.local_header_error;
    if (!seen.insert(r.name).second) info.warnings.push_back("duplicate record name: " + r.name);
    if (!e.name.empty() && (e.name[0] == '/' || e.name.find("..") != std::string::npos || e.name.find('\\') != std::string::npos)) {
      info.warnings.push_back("record name escapes the archive: " + e.name);
    }
    bool tensor_data = r.name.rfind("data/", 0) == 0 || r.name.rfind("tensors/", 0) == 0 ||
                       r.name.rfind("constants/", 0) == 0;
    // A duplicated name reads as its last copy; the others are not inflated
    // (thousands of copies of one deflate bomb would take minutes).
    const ZipEntry* last = a.Find(r.name);
    bool shadowed = last != nullptr && last != &e;
    if (shadowed) {
      r.crc_status = "skipped";
    } else if (r.error.empty() && (options.verify_crc || !tensor_data)) {
      try {
        StreamResult s = StreamEntry(src, e, std::max<uint64_t>(e.uncompressed_size, 1));
        r.crc_status = (s.crc32 == e.crc32 && s.produced == e.uncompressed_size) ? "ok" : "mismatch";
        if (r.crc_status == "mismatch") info.warnings.push_back("CRC-32 mismatch in record " + r.name);
      } catch (const Error& err) {
        r.crc_status = "error";
        r.error = err.what();
      }
    } else if (!r.error.empty()) {
      r.crc_status = "error";
      info.warnings.push_back("record " + r.name + ": " + r.error);
    }
    if (r.name.rfind("traced_inputs/", 0) == 0) info.format.traced_inputs = true;
    if (tensor_data) info.storage_bytes += r.size;
    info.records.push_back(std::move(r));
  }

  ReadFormat(a, info);

  // Code records and the classes they define.
  size_t skipped = 0;
  for (const std::string& name : CodeRecords(a, info.format.legacy, kMaxCodeBytes, &skipped)) {
    const ZipEntry& e = *a.Find(name);
    CodeRecordInfo c{name, e.uncompressed_size, e.compressed_size, a.Has(name + ".debug_pkl")};
    info.code.push_back(c);
    try {
      for (ClassInfo& cls : ParseCodeClasses(name, a.Read(name))) info.classes.push_back(std::move(cls));
    } catch (const Error& err) {
      info.warnings.push_back("code record " + name + ": " + err.what());
    }
  }
  if (skipped) {
    info.warnings.push_back(std::to_string(skipped) + " code records not read: the code holds more than " +
                            std::to_string(kMaxCodeBytes >> 20) + " MiB of text");
  }
  if (!info.format.legacy) {
    info.operators = ListOperators(a);
    for (const auto& w : info.operators.warnings) info.warnings.push_back("operators: " + w);
  }
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
          }
        }
      }
    } catch (const Error& err) {
      info.warnings.push_back(std::string("constants.pkl: ") + err.what());
    }
  }
  for (std::string& w : warnings) info.warnings.push_back(std::move(w));

  // Totals by dtype and device, over module tensors and constants.
  std::vector<const TensorInfo*> all;
  if (info.module) Flatten(*info.module, all);
  for (const TensorInfo& t : info.constants) all.push_back(&t);
  std::map<std::pair<std::string, std::string>, TotalInfo> totals;
  for (const TensorInfo* t : all) {
    TotalInfo& tot = totals[{t->dtype, t->device}];
    tot.dtype = t->dtype;
    tot.device = t->device;
    tot.tensors += 1;
    tot.numel += t->numel;
    tot.bytes += t->bytes;
    info.tensor_bytes += t->bytes;
  }
  for (auto& [k, v] : totals) info.totals.push_back(v);

  // extra/ records: every one, whatever its name.
  for (const ZipEntry& e : a.layout().entries) {
    std::string name = a.RecordName(e);
    if (name.rfind("extra/", 0) != 0 || a.Find(name) != &e) continue;  // shadowed copies: once
    ExtraInfo x;
    x.name = name.substr(6);
    x.size = e.uncompressed_size;
    uint64_t limit = std::max(options.max_extra_json, options.max_extra_text);
    if (e.uncompressed_size > limit) {
      // Too large to show whole: look at its start to tell text from binary.
      x.content_type = "binary";
      x.truncated = true;
      try {
        std::string head;
        struct Enough {};
        try {
          StreamEntry(src, e, uint64_t{1} << 40, [&](const char* p, size_t n) {
            head.append(p, std::min<size_t>(n, 512 - head.size()));
            if (head.size() >= 512) throw Enough{};
          });
        } catch (const Enough&) {
        }
        // Cut at the last newline or space so a multi-byte character is not split.
        size_t cut = head.find_last_of("\n ");
        if (cut != std::string::npos && cut > 0) head.resize(cut);
        if (IsTextual(head)) {
          x.content_type = "text";
          x.content = head;
        }
      } catch (const Error& err) {
        x.content_type = "unreadable";
        x.error = err.what();
      }
      info.extra.push_back(std::move(x));
      continue;
    }
    try {
      std::string content = ReadEntry(src, e, limit);
      if (!content.empty() && (content[0] == '{' || content[0] == '[') &&
          content.size() <= options.max_extra_json &&
          JsonTextDepth(content, kMaxJsonDepth) <= kMaxJsonDepth && nlohmann::json::accept(content)) {
        x.content_type = "json";
        x.content = content;
      } else if (IsTextual(content)) {
        x.content_type = "text";
        x.truncated = content.size() > options.max_extra_text;
        x.content = content.substr(0, static_cast<size_t>(options.max_extra_text));
      } else {
        x.content_type = "binary";
      }
    } catch (const Error& err) {
      x.content_type = "unreadable";
      x.error = err.what();
      info.warnings.push_back("extra/" + x.name + ": " + err.what());
    }
    info.extra.push_back(std::move(x));
  }
  return info;
}

}  // namespace tsctl
