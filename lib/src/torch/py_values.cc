#include "py_values.h"

#include "npy.h"

#include <torch/serialize.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "sandbox.h"
#include "tensors.h"
#include "tsctl/dtype.h"
#include "tsctl/archive.h"
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "tsctl/pickle.h"
#include "../archive/storage_types.h"

namespace tsctl {
namespace {

// The ScalarType of a value file's tensor: any this LibTorch has whose bytes
// are the values (quantized tensors need their scale, packed bits a layout).
at::ScalarType TypeOf(const std::string& dtype) {
  const DtypeInfo* d = DtypeByName(dtype);
  if (!d || d->kind == DtypeKind::kQuantized || d->kind == DtypeKind::kBits) return at::ScalarType::Undefined;
  return AtScalarType(d);
}

// Converts the value tree of a torch.save pickle, reading storages from the
// archive's data/ records.
class Converter {
 public:
  Converter(const Archive& archive, const std::string& path) : archive_(archive), path_(path) {}

  c10::IValue Convert(const PyRef& v, int depth = 0) {
    if (!v) return {};
    if (depth > 200) BadValueFile(path_, "values nested too deeply");
    switch (v->kind) {
      case PyKind::kNone: return {};
      case PyKind::kBool: return c10::IValue(v->boolean);
      case PyKind::kInt:
        if (!v->str.empty()) BadValueFile(path_, "an integer too big for int64 (" + v->str + ")");
        return c10::IValue(v->integer);
      case PyKind::kFloat: return c10::IValue(v->real);
      case PyKind::kString: return c10::IValue(v->str);
      case PyKind::kList: {
        c10::impl::GenericList list(c10::AnyType::get());
        for (const auto& i : v->items) list.push_back(Convert(i, depth + 1));
        return list;
      }
      case PyKind::kTuple: {
        std::vector<c10::IValue> items;
        for (const auto& i : v->items) items.push_back(Convert(i, depth + 1));
        return c10::ivalue::Tuple::create(std::move(items));
      }
      case PyKind::kDict: return Dict(v->entries, depth);
      case PyKind::kObject: return Object(v, depth);
      default: BadValueFile(path_, "holds a " + Repr(v, 60) + ", which is not data tsctl can pass to a method");
    }
  }

 private:
  c10::IValue Dict(const std::vector<std::pair<PyRef, PyRef>>& entries, int depth) {
    bool int_keys = !entries.empty();
    for (const auto& [k, val] : entries) int_keys &= k && k->kind == PyKind::kInt;
    c10::TypePtr key_type = int_keys ? c10::TypePtr(c10::IntType::get()) : c10::TypePtr(c10::StringType::get());
    c10::impl::GenericDict dict(key_type, c10::AnyType::get());
    for (const auto& [k, val] : entries) {
      if (!k || (k->kind != PyKind::kString && !int_keys)) BadValueFile(path_, "a dict key that is not a string or an int");
      dict.insert_or_assign(int_keys ? c10::IValue(k->integer) : c10::IValue(k->str), Convert(val, depth + 1));
    }
    return dict;
  }

  c10::IValue Object(const PyRef& v, int depth) {
    const std::string name = v->QualifiedName();
    if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") {
      if (v->items.size() < 4) BadValueFile(path_, "a malformed tensor");
      return Tensor(v->items[0], v->items[1], v->items[2], v->items[3]);
    }
    if (name == "torch._utils._rebuild_parameter" && !v->items.empty()) return Convert(v->items[0], depth + 1);
    // LibTorch's pickler (torch::pickle_save) tags typed containers.
    if ((name == "torch.jit._pickle.restore_type_tag" || name.rfind("torch.jit._pickle.build_", 0) == 0) && !v->items.empty()) {
      return Convert(v->items[0], depth + 1);
    }
    if (name == "collections.OrderedDict") {
      return Dict(v->state ? v->state->entries : std::vector<std::pair<PyRef, PyRef>>{}, depth);
    }
    if (name == "builtins.complex" || name == "_codecs.encode") BadValueFile(path_, "holds " + name + ", which tsctl cannot pass to a method");
    if (name == "torch.device" && !v->items.empty() && v->items[0]->kind == PyKind::kString) {
      return c10::IValue(c10::Device(v->items[0]->str));
    }
    BadValueFile(path_, "holds an object of " + name + "; only tensors, numbers, strings, None, lists, tuples and dicts can be inputs");
  }

  at::Tensor Tensor(const PyRef& pid, const PyRef& offset, const PyRef& size, const PyRef& stride) {
    if (!pid || pid->kind != PyKind::kPersistentId || pid->items.empty() || pid->items[0]->items.size() < 5) {
      BadValueFile(path_, "a tensor without a storage");
    }
    const auto& id = pid->items[0]->items;  // ('storage', torch.FloatStorage, key, location, numel)
    const StorageDtype* dtype = DtypeOfStorage(id[1]->name);
    at::ScalarType type = dtype ? TypeOf(dtype->name) : at::ScalarType::Undefined;
    if (type == at::ScalarType::Undefined) BadValueFile(path_, "a tensor of " + id[1]->name + ", which tsctl cannot read");
    const std::string key = id[2]->str;
    auto it = storages_.find(key);
    if (it == storages_.end()) {
      std::string bytes = archive_.Read("data/" + key, kMaxValueRecord);
      int64_t numel = static_cast<int64_t>(bytes.size() / c10::elementSize(type));
      at::Tensor s = at::empty({numel}, at::TensorOptions().dtype(type));
      if (!bytes.empty()) std::memcpy(s.data_ptr(), bytes.data(), static_cast<size_t>(numel) * c10::elementSize(type));
      it = storages_.emplace(key, s).first;
    }
    std::vector<int64_t> sizes, strides;
    for (const auto& d : size->items) sizes.push_back(d->integer);
    for (const auto& d : stride->items) strides.push_back(d->integer);
    if (sizes.size() != strides.size()) BadValueFile(path_, "a tensor whose size and stride differ in length");
    int64_t last = offset->integer;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] < 0 || strides[i] < 0) BadValueFile(path_, "a tensor with a negative size or stride");
      if (sizes[i] == 0) last = -1;
      if (last >= 0) last += (sizes[i] - 1) * strides[i];
    }
    if (offset->integer < 0 || last >= it->second.numel()) BadValueFile(path_, "a tensor that reaches past its storage");
    return it->second.as_strided(sizes, strides, offset->integer).clone();
  }

  const Archive& archive_;
  std::string path_;
  std::map<std::string, at::Tensor> storages_;
};

// LoadValueFile's and LoadValueBytes's reading.
c10::IValue LoadValueSource(std::unique_ptr<ByteSource> src, const std::string& path);

}  // namespace

std::vector<std::pair<std::string, c10::IValue>> LoadNpzArrays(const std::string& path) {
  std::unique_ptr<ByteSource> src;
  try {
    src = OpenFileSource(path);
  } catch (const Error& e) {
    throw Error(e.kind(), path + ": " + e.what());
  }
  return NpzArrays(Archive::OpenAny(std::move(src)), path);
}

std::vector<c10::IValue> BindNamedArrays(const c10::FunctionSchema& schema,
                                         const std::vector<std::pair<std::string, c10::IValue>>& arrays,
                                         const std::string& path) {
  const auto& formal = schema.arguments();
  std::vector<std::string> unknown;
  for (const auto& [name, value] : arrays) {
    bool known = false;
    for (size_t i = 1; i < formal.size(); ++i) known |= formal[i].name() == name;
    if (!known) unknown.push_back(name);
  }
  std::vector<c10::IValue> out;
  if (unknown.size() == arrays.size()) {  // numpy's arr_0, arr_1, ...: by position
    for (const auto& a : arrays) out.push_back(a.second);
    return out;
  }
  auto names = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  std::vector<std::string> formal_names;
  for (size_t i = 1; i < formal.size(); ++i) formal_names.push_back(formal[i].name());
  if (!unknown.empty()) {
    throw Error(ErrorKind::kUsage, path + ": arrays " + names(unknown) + " name no argument of " + schema.name() + " (" +
                                       names(formal_names) + "); name every array after an argument, or none");
  }
  // By name, up to the last argument given; those before it left out take
  // their defaults.
  size_t last = 0;
  for (size_t i = 1; i < formal.size(); ++i) {
    for (const auto& a : arrays) {
      if (a.first == formal[i].name()) last = i;
    }
  }
  for (size_t i = 1; i <= last; ++i) {
    const c10::IValue* found = nullptr;
    for (const auto& a : arrays) {
      if (a.first == formal[i].name()) found = &a.second;
    }
    if (found) {
      out.push_back(*found);
    } else if (formal[i].default_value()) {
      out.push_back(*formal[i].default_value());
    } else {
      throw Error(ErrorKind::kUsage, path + ": no array for argument '" + formal[i].name() + "' of " + schema.name() +
                                         " (arrays: " + names([&] {
                                           std::vector<std::string> v;
                                           for (const auto& a : arrays) v.push_back(a.first);
                                           return v;
                                         }()) + ")");
    }
  }
  return out;
}

bool IsReferenceRecord(const c10::IValue& loaded) {
  return loaded.isGenericDict() && loaded.toGenericDict().contains("inputs") && loaded.toGenericDict().contains("outputs");
}

std::vector<c10::IValue> LoadArguments(const c10::FunctionSchema& schema, const std::string& path,
                                       const std::string& label) {
  if (!label.empty() && label != path) {
    try {
      return LoadArguments(schema, path);
    } catch (const Error& e) {
      std::string message = e.what();
      for (size_t at = message.find(path); at != std::string::npos; at = message.find(path, at + label.size())) {
        message.replace(at, path.size(), label);
      }
      throw Error(e.kind(), message, e.detail());
    }
  }
  std::vector<c10::IValue> inputs;
  if (EndsWith(path, ".npz")) {
    inputs = BindNamedArrays(schema, LoadNpzArrays(path), path);
  } else {
    const c10::IValue loaded = LoadValueFile(path);
    if (IsReferenceRecord(loaded)) {
      inputs = ArgumentList(loaded.toGenericDict().at("inputs"));
    } else {
      inputs = ArgumentList(loaded);
    }
  }
  const auto& formal = schema.arguments();
  size_t n = formal.empty() ? 0 : formal.size() - 1, needed = 0;
  for (size_t i = 1; i < formal.size(); ++i) needed += !formal[i].default_value().has_value();
  if (inputs.size() > n || inputs.size() < needed) {
    std::string args;
    for (size_t i = 1; i < formal.size(); ++i) args += (i > 1 ? ", " : "") + formal[i].name() + ": " + formal[i].type()->annotation_str();
    throw Error(ErrorKind::kUsage, path + " holds " + std::to_string(inputs.size()) + " argument" +
                                       (inputs.size() == 1 ? "" : "s") + "; " + schema.name() + " takes " +
                                       (needed == n ? std::to_string(n) : std::to_string(needed) + " to " + std::to_string(n)) +
                                       " (" + args + ")");
  }
  return inputs;
}

c10::IValue LoadValueFile(const std::string& path) {
  std::unique_ptr<ByteSource> src;
  try {
    src = OpenFileSource(path);
  } catch (const Error& e) {
    throw Error(e.kind(), path + ": " + e.what());
  }
  return LoadValueSource(std::move(src), path);
}

c10::IValue LoadValueBytes(std::string bytes, const std::string& name) {
  return LoadValueSource(MakeMemorySource(std::move(bytes), name), name);
}

namespace {

c10::IValue LoadValueSource(std::unique_ptr<ByteSource> src, const std::string& path) {
  if (EndsWith(path, ".npy")) return ReadNpy(src->ReadString(0, static_cast<size_t>(src->Size())), path);
  Archive archive = Archive::OpenAny(std::move(src));
  if (EndsWith(path, ".npz") || (archive.kind() == ArchiveKind::kOtherZip && !archive.Has("data.pkl"))) {
    std::vector<c10::IValue> arrays;
    for (auto& [name, value] : NpzArrays(archive, path)) arrays.push_back(std::move(value));
    return c10::ivalue::Tuple::create(std::move(arrays));
  }
  if (!archive.Has("data.pkl")) {
    BadValueFile(path, std::string("not a torch.save file (") + ArchiveKindName(archive.kind()) +
                  "; write it with torch.save(value, f) in the default ZIP format, or give .npy/.npz)");
  }
  PyRef root = ParsePickle(archive.Read("data.pkl", uint64_t{1} << 30));
  Converter c(archive, path);
  return c.Convert(root);
}

}  // namespace

c10::IValue Retype(const c10::TypePtr& type, const c10::IValue& value) {
  using c10::TypeKind;
  switch (type->kind()) {
    case TypeKind::OptionalType:
      return value.isNone() ? value : Retype(type->expectRef<c10::OptionalType>().getElementType(), value);
    case TypeKind::FloatType:
      return value.isInt() ? c10::IValue(static_cast<double>(value.toInt())) : value;
    case TypeKind::ListType: {
      if (!value.isList() && !value.isTuple()) return value;
      const c10::TypePtr& elem = type->expectRef<c10::ListType>().getElementType();
      c10::impl::GenericList list(elem);
      for (const auto& e : ArgumentList(value)) {
        c10::IValue v = Retype(elem, e);
        if (!v.type()->isSubtypeOf(*elem)) return value;  // the method's check names the misfit
        list.push_back(v);
      }
      return list;
    }
    case TypeKind::TupleType: {
      const auto& elems = type->expectRef<c10::TupleType>().elements();
      if (!value.isList() && !value.isTuple()) return value;
      std::vector<c10::IValue> items = ArgumentList(value);
      if (items.size() != elems.size()) return value;
      for (size_t i = 0; i < items.size(); ++i) items[i] = Retype(elems[i], items[i]);
      return c10::ivalue::Tuple::create(std::move(items));
    }
    case TypeKind::DictType: {
      if (!value.isGenericDict()) return value;
      const auto& d = type->expectRef<c10::DictType>();
      c10::impl::GenericDict dict(d.getKeyType(), d.getValueType());
      for (const auto& kv : value.toGenericDict()) {
        c10::IValue v = Retype(d.getValueType(), kv.value());
        if (!kv.key().type()->isSubtypeOf(*d.getKeyType()) || !v.type()->isSubtypeOf(*d.getValueType())) return value;
        dict.insert(kv.key(), v);
      }
      return dict;
    }
    default: return value;
  }
}

std::vector<c10::IValue> ArgumentList(const c10::IValue& value) {
  if (value.isTuple()) {
    std::vector<c10::IValue> out;
    for (const auto& v : value.toTupleRef().elements()) out.push_back(v);
    return out;
  }
  if (value.isList()) return value.toListRef().vec();
  return {value};
}

void SaveValueFile(const c10::IValue& value, const std::string& path) {
  if (EndsWith(path, ".npy") || EndsWith(path, ".npz")) {
    WriteChildFile(path, NpyBytes(value, path));
    return;
  }
  std::vector<char> bytes = torch::pickle_save(value);
  WriteChildFile(path, std::string(bytes.begin(), bytes.end()));
}

}  // namespace tsctl
