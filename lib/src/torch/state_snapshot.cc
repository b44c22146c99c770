// SnapshotState and AddStateChanges (module_state.h): a module tree's
// attributes, buffers and parameters, fingerprinted, and what differs.
#include <cstring>
#include <set>

#include "module_state.h"
#include "tensors.h"

namespace tsctl {
namespace {

constexpr uint64_t kSeed = 0x9e3779b97f4a7c15ULL;

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + kSeed + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

uint64_t HashBytes(uint64_t h, const uint8_t* p, size_t n) {
  uint64_t a = h, b = h ^ kSeed;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    uint64_t x, y;
    std::memcpy(&x, p + i, 8);
    std::memcpy(&y, p + i + 8, 8);
    a = (a ^ x) * 0x9fb21c651e98df25ULL;
    b = (b ^ y) * 0xc2b2ae3d27d4eb4fULL;
    a ^= a >> 29;
    b ^= b >> 31;
  }
  for (; i < n; ++i) a = (a ^ p[i]) * 0x100000001b3ULL;
  return Mix(Mix(h, a), b ^ n);
}

uint64_t HashString(uint64_t h, const std::string& s) {
  return HashBytes(h, reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// Fingerprints of values, with a bound on the elements visited in all.
class Fingerprinter {
 public:
  uint64_t Of(const c10::IValue& v) { return Value(v, 0); }

 private:
  static constexpr uint64_t kMaxElements = uint64_t{4} << 20;
  static constexpr int kMaxDepth = 32;

  uint64_t Tensor(const at::Tensor& t) {
    uint64_t h = Mix(kSeed, 1);
    if (!t.defined()) return Mix(h, 0);
    h = Mix(h, static_cast<uint64_t>(t.scalar_type()));
    for (int64_t s : t.sizes()) h = Mix(h, static_cast<uint64_t>(s));
    if (t.is_sparse()) {
      h = Mix(h, Tensor(t._indices()));
      return Mix(h, Tensor(t._values()));
    }
    if (t.is_mkldnn() || !t.has_storage()) return h;
    for (int64_t s : t.strides()) h = Mix(h, static_cast<uint64_t>(s));
    h = Mix(h, static_cast<uint64_t>(t.storage_offset()));
    const c10::Storage& storage = t.storage();
    if (t.device().is_cpu()) {
      const auto* data = static_cast<const uint8_t*>(storage.data());
      return data ? HashBytes(h, data, storage.nbytes()) : h;
    }
    // Another device: the tensor's own elements, copied to the CPU.
    const at::Tensor cpu = t.detach().contiguous().cpu();
    return HashBytes(h, static_cast<const uint8_t*>(cpu.data_ptr()), cpu.nbytes());
  }

  uint64_t Value(const c10::IValue& v, int depth) {
    if (++elements_ > kMaxElements || depth > kMaxDepth) return Mix(kSeed, 2);
    if (v.isTensor()) return Tensor(v.toTensor());
    if (v.isNone()) return Mix(kSeed, 3);
    if (v.isInt()) return Mix(Mix(kSeed, 4), static_cast<uint64_t>(v.toInt()));
    if (v.isDouble()) {
      const double d = v.toDouble();
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return Mix(Mix(kSeed, 5), bits);
    }
    if (v.isBool()) return Mix(Mix(kSeed, 6), v.toBool());
    if (v.isString()) return HashString(Mix(kSeed, 7), v.toStringRef());
    if (v.isList()) {
      uint64_t h = Mix(Mix(kSeed, 8), v.toListRef().size());
      for (const c10::IValue& e : v.toListRef()) h = Mix(h, Value(e, depth + 1));
      return h;
    }
    if (v.isTuple()) {
      uint64_t h = Mix(Mix(kSeed, 9), v.toTupleRef().elements().size());
      for (const c10::IValue& e : v.toTupleRef().elements()) h = Mix(h, Value(e, depth + 1));
      return h;
    }
    if (v.isGenericDict()) {
      const auto dict = v.toGenericDict();
      uint64_t h = Mix(Mix(kSeed, 10), dict.size());
      for (const auto& e : dict) h = Mix(Mix(h, Value(e.key(), depth + 1)), Value(e.value(), depth + 1));
      return h;
    }
    if (v.isObject()) {
      const auto& obj = v.toObjectRef();
      if (!objects_.insert(&obj).second) return Mix(kSeed, 11);  // a cycle, or shared: counted once
      uint64_t h = Mix(kSeed, 12);
      for (size_t i = 0; i < obj.slots().size(); ++i) h = Mix(h, Value(obj.getSlot(i), depth + 1));
      objects_.erase(&obj);
      return h;
    }
    if (v.isDevice()) return HashString(Mix(kSeed, 13), v.toDevice().str());
    // Custom class objects (packed weights) and the like: opaque.
    return Mix(Mix(kSeed, 14), static_cast<uint64_t>(v.tagKind().size()));
  }

  uint64_t elements_ = 0;
  std::set<const c10::ivalue::Object*> objects_;
};

std::string TypeNameOf(const c10::IValue& v) {
  const auto name = v.toObjectRef().type()->name();
  return name ? name->qualifiedName() : "?";
}

std::string DescribeValue(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().defined() ? Describe(v.toTensor()) : "an undefined tensor";
  if (v.isNone()) return "None";
  if (v.isInt()) return "int " + std::to_string(v.toInt());
  if (v.isDouble()) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "float %.6g", v.toDouble());
    return buf;
  }
  if (v.isBool()) return v.toBool() ? "bool True" : "bool False";
  if (v.isString()) {
    std::string s = v.toStringRef();
    if (s.size() > 40) s = s.substr(0, 40) + "...";
    return "str '" + s + "'";
  }
  if (v.isList()) return "list of " + std::to_string(v.toListRef().size());
  if (v.isTuple()) return "tuple of " + std::to_string(v.toTupleRef().elements().size());
  if (v.isGenericDict()) return "dict of " + std::to_string(v.toGenericDict().size());
  if (v.isObject()) return "object " + TypeNameOf(v);
  return v.tagKind();
}

void Walk(const c10::ivalue::Object& obj, const std::string& prefix, Fingerprinter& prints,
          std::set<const c10::ivalue::Object*>& seen, StateSnapshot& out) {
  if (!seen.insert(&obj).second) return;
  const auto& type = obj.type();
  const std::string owner = type->name() ? type->name()->qualifiedName() : "";
  for (size_t i = 0; i < type->numAttributes() && i < obj.slots().size(); ++i) {
    const std::string path = prefix + type->getAttributeName(i);
    const c10::IValue& v = obj.getSlot(i);
    if (v.isObject() && v.toObjectRef().type()->is_module()) {
      Walk(v.toObjectRef(), path + ".", prints, seen, out);
      continue;
    }
    StateEntry& e = out[path];
    e.kind = type->is_parameter(i) ? "parameter" : type->is_buffer(i) ? "buffer" : "attribute";
    e.desc = DescribeValue(v);
    e.fingerprint = prints.Of(v);
    e.owner_type = owner;
  }
}

}  // namespace

StateSnapshot SnapshotState(const torch::jit::Module& module) {
  StateSnapshot out;
  Fingerprinter prints;
  std::set<const c10::ivalue::Object*> seen;
  Walk(*module._ivalue(), "", prints, seen, out);
  return out;
}

void AddStateChanges(const StateSnapshot& before, const StateSnapshot& after, int after_call,
                     std::vector<StateChange>& out) {
  std::set<std::string> listed;
  for (const StateChange& c : out) listed.insert(c.attribute);
  auto add = [&](const std::string& path, const StateEntry* a, const StateEntry* b) {
    if (listed.count(path)) return;
    const StateEntry& any = b ? *b : *a;
    StateChange c{path, any.kind, a ? a->desc : "absent", b ? b->desc : "absent", after_call,
                  KnownStateNote(path, any.owner_type)};
    if (a && b && a->desc == b->desc) c.after += ", other values";
    out.push_back(std::move(c));
  };
  for (const auto& [path, a] : before) {
    auto it = after.find(path);
    if (it == after.end()) add(path, &a, nullptr);
    else if (it->second.fingerprint != a.fingerprint || it->second.desc != a.desc) add(path, &a, &it->second);
  }
  for (const auto& [path, b] : after) {
    if (!before.count(path)) add(path, nullptr, &b);
  }
}

}  // namespace tsctl
