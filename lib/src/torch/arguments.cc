#include "arguments.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <sstream>

#include "tensors.h"
#include "tsctl/error.h"

namespace tsctl {
namespace {

using nlohmann::json;

// Parses a spelling as JSON; text that is not JSON is a bare string
// (a tensor spec, or a str argument given without quotes).
json ParseSpelling(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return json(text);
  return j;
}

[[noreturn]] void Misfit(const std::string& what, const c10::TypePtr& type, const json& j, const std::string& why = "") {
  std::string shown = j.dump();
  if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
  throw Error(ErrorKind::kUsage, "argument " + what + " of type " + type->annotation_str() + ": " + shown + " does not fit" +
                                     (why.empty() ? "" : " (" + why + ")"));
}

// A tensor from a nested list of numbers: float32 if any is not a whole
// number, bool if all are booleans, else int64.
at::Tensor TensorFromList(const json& j, const std::string& what, const c10::TypePtr& type) {
  std::vector<int64_t> shape;
  const json* level = &j;
  while (level->is_array()) {
    shape.push_back(static_cast<int64_t>(level->size()));
    if (level->empty()) break;
    level = &(*level)[0];
  }
  std::vector<double> flat;
  bool any_float = false, all_bool = true;
  std::function<void(const json&, size_t)> walk = [&](const json& v, size_t depth) {
    if (depth < shape.size()) {
      if (!v.is_array() || static_cast<int64_t>(v.size()) != shape[depth]) Misfit(what, type, j, "a ragged nested list");
      for (const json& e : v) walk(e, depth + 1);
      return;
    }
    if (v.is_boolean()) {
      flat.push_back(v.get<bool>());
      return;
    }
    if (!v.is_number()) Misfit(what, type, j, "tensor elements must be numbers");
    all_bool = false;
    any_float |= v.is_number_float();
    flat.push_back(v.get<double>());
  };
  walk(j, 0);
  at::ScalarType dtype = flat.empty() || any_float ? at::kFloat : all_bool ? at::kBool : at::kLong;
  return at::tensor(flat, at::TensorOptions().dtype(at::kDouble)).reshape(shape).to(dtype);
}

c10::IValue FromJson(const c10::TypePtr& type, const json& j, const std::string& what, at::Generator& gen);

// A tensor argument: a spec made into a tensor, or a nested list of numbers.
at::Tensor TensorFromJson(const c10::TypePtr& type, const json& j, const std::string& what, at::Generator& gen) {
  if (j.is_string()) {
    try {
      return MakeInput(ParseInputSpec(j.get<std::string>()), gen);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kUsage) throw;
      Misfit(what, type, j, e.what());
    }
  }
  if (j.is_array() || j.is_number()) return TensorFromList(j, what, type);
  Misfit(what, type, j, "give a spec like 1x3x8x8:float32 or a nested list of numbers");
}

// A list or a tuple argument, element by element.
c10::IValue SequenceFromJson(const c10::TypePtr& type, const json& j, const std::string& what, at::Generator& gen) {
  auto item = [&](size_t i) { return what + "[" + std::to_string(i) + "]"; };
  if (type->kind() == c10::TypeKind::ListType) {
    const c10::TypePtr& elem = type->expectRef<c10::ListType>().getElementType();
    if (!j.is_array()) Misfit(what, type, j, "expected a list [...]");
    c10::impl::GenericList list(elem);
    for (size_t i = 0; i < j.size(); ++i) list.push_back(FromJson(elem, j[i], item(i), gen));
    return list;
  }
  const auto& elems = type->expectRef<c10::TupleType>().elements();
  if (!j.is_array() || j.size() != elems.size()) {
    Misfit(what, type, j, "expected a list of " + std::to_string(elems.size()) + " values");
  }
  std::vector<c10::IValue> values;
  for (size_t i = 0; i < elems.size(); ++i) values.push_back(FromJson(elems[i], j[i], item(i), gen));
  return c10::ivalue::Tuple::create(std::move(values));
}

// A dict argument: a JSON object whose keys are the dict's str keys or its
// int keys written as decimal strings.
c10::IValue DictFromJson(const c10::DictType& dict_type, const c10::TypePtr& type, const json& j, const std::string& what,
                         at::Generator& gen) {
  if (!j.is_object()) Misfit(what, type, j, "expected an object {...}");
  c10::impl::GenericDict dict(dict_type.getKeyType(), dict_type.getValueType());
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    c10::IValue k;
    if (dict_type.getKeyType()->kind() == c10::TypeKind::StringType) {
      k = c10::IValue(key);
    } else if (dict_type.getKeyType()->kind() == c10::TypeKind::IntType) {
      char* end = nullptr;
      long long v = std::strtoll(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0') Misfit(what, type, j, "key '" + key + "' is not a whole number");
      k = c10::IValue(static_cast<int64_t>(v));
    } else {
      Misfit(what, type, j, "only str and int keys can be given");
    }
    dict.insert(k, FromJson(dict_type.getValueType(), item.value(), what + "[" + json(key).dump() + "]", gen));
  }
  return dict;
}

c10::IValue FromJson(const c10::TypePtr& type, const json& j, const std::string& what, at::Generator& gen) {
  using c10::TypeKind;
  switch (type->kind()) {
    case TypeKind::TensorType: return TensorFromJson(type, j, what, gen);
    case TypeKind::IntType:
    case TypeKind::ScalarTypeType:
    case TypeKind::LayoutType:
    case TypeKind::MemoryFormatType:
      if (j.is_number_integer()) return c10::IValue(j.get<int64_t>());
      Misfit(what, type, j, "expected a whole number");
    case TypeKind::FloatType:
      if (j.is_number()) return c10::IValue(j.get<double>());
      Misfit(what, type, j, "expected a number");
    case TypeKind::NumberType:
      if (j.is_number_integer()) return c10::IValue(j.get<int64_t>());
      if (j.is_number()) return c10::IValue(j.get<double>());
      Misfit(what, type, j, "expected a number");
    case TypeKind::BoolType:
      if (j.is_boolean()) return c10::IValue(j.get<bool>());
      Misfit(what, type, j, "expected true or false");
    case TypeKind::StringType:
      if (j.is_string()) return c10::IValue(j.get<std::string>());
      Misfit(what, type, j, "expected a string");
    case TypeKind::DeviceObjType:
      if (j.is_string()) {
        try {
          return c10::IValue(c10::Device(j.get<std::string>()));
        } catch (const std::exception&) {
        }
      }
      Misfit(what, type, j, "expected a device such as \"cpu\"");
    case TypeKind::NoneType:
      if (j.is_null()) return c10::IValue();
      Misfit(what, type, j, "expected null");
    case TypeKind::OptionalType: {
      if (j.is_null()) return c10::IValue();
      return FromJson(type->expectRef<c10::OptionalType>().getElementType(), j, what, gen);
    }
    case TypeKind::ListType:
    case TypeKind::TupleType: return SequenceFromJson(type, j, what, gen);
    case TypeKind::DictType: return DictFromJson(type->expectRef<c10::DictType>(), type, j, what, gen);
    case TypeKind::AnyType:
      if (j.is_null()) return c10::IValue();
      if (j.is_boolean()) return c10::IValue(j.get<bool>());
      if (j.is_number_integer()) return c10::IValue(j.get<int64_t>());
      if (j.is_number()) return c10::IValue(j.get<double>());
      if (j.is_string()) return c10::IValue(j.get<std::string>());
      Misfit(what, type, j, "lists and dicts need a typed argument");
    default:
      Misfit(what, type, j, "arguments of this type cannot be given on the command line");
  }
}

std::string ShellQuote(const std::string& s) {
  if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_=:.,-+/@") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

c10::IValue ArgumentValue(const c10::TypePtr& type, const std::string& text, const std::string& what, at::Generator& gen) {
  return FromJson(type, ParseSpelling(text), what, gen);
}

std::string DescribeArguments(const c10::FunctionSchema& schema) {
  std::string s;
  const auto& args = schema.arguments();
  for (size_t i = 1; i < args.size(); ++i) {
    s += (s.empty() ? "" : ", ") + args[i].name() + ": " + args[i].type()->annotation_str();
    if (args[i].default_value()) {
      std::ostringstream d;
      d << *args[i].default_value();
      s += " = " + d.str();
    }
  }
  return s;
}

size_t ArgumentCount(const c10::FunctionSchema& schema) {
  return schema.arguments().empty() ? 0 : schema.arguments().size() - 1;
}

std::vector<c10::IValue> BuildArguments(const c10::FunctionSchema& schema, const std::vector<ArgSpec>& args, at::Generator& gen,
                                        std::vector<size_t>* bound) {
  const auto& formal = schema.arguments();
  const size_t n = ArgumentCount(schema);
  size_t required = 0;
  for (size_t i = 1; i < formal.size(); ++i) required += !formal[i].default_value().has_value();
  auto takes = [&] {
    std::string count = required == n ? std::to_string(n) : std::to_string(required) + " to " + std::to_string(n);
    return schema.name() + " takes " + count + " argument" + (n == 1 ? "" : "s") + (n ? " (" + DescribeArguments(schema) + ")" : "");
  };
  std::vector<const std::string*> given(n, nullptr);
  size_t next = 0;
  size_t positional = 0;
  for (const ArgSpec& a : args) {
    if (a.name.empty()) {
      ++positional;
      while (next < n && given[next]) ++next;
      if (next >= n) throw Error(ErrorKind::kUsage, takes() + "; " + std::to_string(positional) + " or more given");
      if (bound) bound->push_back(next);
      given[next++] = &a.value;
      continue;
    }
    size_t k = 0;
    while (k < n && formal[k + 1].name() != a.name) ++k;
    if (k == n) throw Error(ErrorKind::kUsage, "no argument '" + a.name + "': " + takes());
    if (given[k]) throw Error(ErrorKind::kUsage, "argument '" + a.name + "' given twice: " + takes());
    if (bound) bound->push_back(k);
    given[k] = &a.value;
  }
  std::vector<c10::IValue> values;
  for (size_t k = 0; k < n; ++k) {
    const c10::Argument& arg = formal[k + 1];
    if (given[k]) {
      values.push_back(ArgumentValue(arg.type(), *given[k], "'" + arg.name() + "'", gen));
    } else if (arg.default_value()) {
      values.push_back(*arg.default_value());
    } else {
      size_t count = 0;
      for (auto* g : given) count += g != nullptr;
      throw Error(ErrorKind::kUsage, takes() + "; " + std::to_string(count) + " given, no value for '" + arg.name() + "'");
    }
  }
  return values;
}

std::vector<FormalArg> Formals(const c10::FunctionSchema& schema) {
  std::function<bool(const c10::TypePtr&)> holds = [&](const c10::TypePtr& t) {
    if (t->kind() == c10::TypeKind::TensorType) return true;
    for (const c10::TypePtr& c : t->containedTypes()) {
      if (holds(c)) return true;
    }
    return false;
  };
  std::vector<FormalArg> out;
  const auto& formal = schema.arguments();
  for (size_t i = 1; i < formal.size(); ++i) out.push_back({formal[i].name(), holds(formal[i].type())});
  return out;
}

std::vector<ArgSpec> ArgsFromInputs(const std::vector<InputSpec>& inputs) {
  std::vector<ArgSpec> args;
  for (const InputSpec& s : inputs) args.push_back({"", s.ToString()});
  return args;
}

std::string DescribeArgs(const std::vector<ArgSpec>& args) {
  std::string s;
  for (const ArgSpec& a : args) s += (s.empty() ? "" : ", ") + (a.name.empty() ? "" : a.name + "=") + a.value;
  return s;
}

std::string ArgsAsFlags(const std::vector<ArgSpec>& args) {
  std::string s;
  for (const ArgSpec& a : args) s += (s.empty() ? "" : " ") + std::string("--arg ") + ShellQuote((a.name.empty() ? "" : a.name + "=") + a.value);
  return s;
}

uint64_t ArgumentBytes(const std::string& text) {
  uint64_t total = 0;
  std::function<void(const json&)> walk = [&](const json& j) {
    if (j.is_string()) {
      try {
        uint64_t b = ParseInputSpec(j.get<std::string>()).Bytes();
        total = b > UINT64_MAX - total ? UINT64_MAX : total + b;
      } catch (const Error&) {
      }
    } else if (j.is_structured()) {
      for (const json& e : j) walk(e);
    }
  };
  walk(ParseSpelling(text));
  return total;
}

}  // namespace tsctl
