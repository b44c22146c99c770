// tsctl-pte-runner's inputs (runner_support.h): made from a method's
// metadata, --input's specs, --arg's values or --load-inputs' arrays.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "runner_support.h"
#include "tsctl/error.h"

// Module::method and Method::get_input are marked deprecated; they are the
// way to the values a program holds for its scalar inputs.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace tsctl {

using nlohmann::json;

// An input tensor. From the metadata (`spec` null): its dtype and sizes,
// floating types uniform in [0, 1) from a fixed generator (the same values
// every run), other dtypes zeros (a safe index). From --input (`spec`): its
// shape, dtype and fill, as tsctl's inputs are filled (docs/manual/pte.md):
// random is uniform [0, 1) for floating types and integers in [0, 10).
executorch::extension::TensorPtr MakeInput(const executorch::runtime::TensorInfo& info, const tsctl::InputSpec* spec, uint64_t& state) {
  std::vector<executorch::aten::SizesType> sizes(info.sizes().begin(), info.sizes().end());
  auto type = info.scalar_type();
  if (spec) {
    sizes.assign(spec->shape.begin(), spec->shape.end());
    if (const tsctl::DtypeInfo* d = tsctl::DtypeByName(spec->dtype)) type = static_cast<executorch::aten::ScalarType>(tsctl::DtypeValue(*d));
  }
  executorch::extension::TensorPtr t = executorch::extension::zeros(sizes, type);
  const tsctl::DtypeInfo* d = tsctl::DtypeByValue(static_cast<int>(type));
  if (!d) return t;
  using Fill = tsctl::InputSpec::Fill;
  const Fill fill = spec ? spec->fill : d->kind == tsctl::DtypeKind::kFloat ? Fill::kUniform : Fill::kZeros;
  const double low = spec && (fill == Fill::kUniform || fill == Fill::kRandint) ? spec->low : 0;
  const double high = spec && (fill == Fill::kUniform || fill == Fill::kRandint) ? spec->high : 1;
  const bool floating = d->kind == tsctl::DtypeKind::kFloat;
  void* p = t->mutable_data_ptr();
  for (ssize_t i = 0; i < t->numel(); ++i) {
    double v = 0;
    switch (fill) {
      case Fill::kZeros: v = 0; break;
      case Fill::kOnes: v = 1; break;
      case Fill::kConstant: v = spec->value; break;
      case Fill::kUniform: v = low + (high - low) * tsctl::NextUniform(state); break;
      case Fill::kRandint: v = std::floor(low + (high - low) * tsctl::NextUniform(state)); break;
      case Fill::kRandom: v = floating ? tsctl::NextUniform(state) : d->kind == tsctl::DtypeKind::kBool ? tsctl::NextUniform(state) < 0.5 : std::floor(10 * tsctl::NextUniform(state)); break;
    }
    tsctl::PutElement(p, *d, i, v);
  }
  return t;
}

std::string ValueFromArray(const NpyArray& a, const std::string& bytes, bool scalar, executorch::runtime::EValue& out,
                           std::vector<executorch::extension::TensorPtr>& keep) {
  const char* p = bytes.data() + a.data;
  if (scalar) {
    if (!a.shape.empty()) return "a number is taken from a 0-d array, not one of shape " + std::to_string(a.shape.size()) + "-d";
    if (a.dtype->kind == DtypeKind::kBool) out = executorch::runtime::EValue(*p != 0);
    else if (a.dtype->kind == DtypeKind::kFloat && a.dtype->size == 8) {
      double d;
      std::memcpy(&d, p, 8);
      out = executorch::runtime::EValue(d);
    } else if (a.dtype->kind == DtypeKind::kSigned && a.dtype->size == 8) {
      int64_t i;
      std::memcpy(&i, p, 8);
      out = executorch::runtime::EValue(i);
    } else {
      return std::string("a number is taken from an int64, float64 or bool array, not ") + a.dtype->name;
    }
    return "";
  }
  const size_t elem = a.dtype->size, n = elem ? a.bytes / elem : 0;
  std::vector<uint8_t> data(p, p + a.bytes);
  if (a.fortran && a.shape.size() > 1) {  // Fortran order: element (i0, ..., ik) at sum(ij * prod(shape[<j]))
    std::vector<int64_t> at(a.shape.size(), 0);
    for (size_t i = 0; i < n; ++i) {
      size_t offset = 0, stride = 1;
      for (size_t d = 0; d < a.shape.size(); ++d) {
        offset += static_cast<size_t>(at[d]) * stride;
        stride *= static_cast<size_t>(a.shape[d]);
      }
      std::memcpy(&data[i * elem], p + offset * elem, elem);
      for (ssize_t d = static_cast<ssize_t>(a.shape.size()) - 1; d >= 0 && ++at[d] == a.shape[d]; --d) at[d] = 0;
    }
  }
  std::vector<executorch::aten::SizesType> sizes(a.shape.begin(), a.shape.end());
  keep.push_back(executorch::extension::make_tensor_ptr(std::move(sizes), std::move(data), {}, {},
                                                        static_cast<executorch::aten::ScalarType>(DtypeValue(*a.dtype))));
  out = executorch::runtime::EValue(keep.back());
  return "";
}

namespace {

using executorch::runtime::EValue;
using executorch::runtime::Tag;

// Numbers of a nested list, in C order, and its shape; "" or why not.
std::string FlattenNested(const json& v, size_t depth, std::vector<int64_t>& shape, std::vector<double>& out) {
  if (v.is_number() || v.is_boolean()) {
    if (depth != shape.size()) return "a list whose items nest unevenly";
    out.push_back(v.is_boolean() ? static_cast<double>(v.get<bool>()) : v.get<double>());
    return "";
  }
  if (!v.is_array()) return "a list of numbers, not " + v.dump();
  if (depth == shape.size()) shape.push_back(static_cast<int64_t>(v.size()));
  else if (depth > shape.size() || shape[depth] != static_cast<int64_t>(v.size())) return "a list whose rows differ in length";
  for (const json& x : v) {
    if (std::string why = FlattenNested(x, depth + 1, shape, out); !why.empty()) return why;
  }
  return "";
}

// --arg VALUE for an input of kind `tag` (a tensor: `info`): a tensor spec
// ("2x4:float32:ones"), a number or bool, or a nested list of numbers (a
// tensor of the input's dtype); "" or why not.
std::string ValueFromArg(const std::string& text, Tag tag, const executorch::runtime::TensorInfo* info, EValue& out,
                         std::vector<executorch::extension::TensorPtr>& keep, uint64_t& state) {
  const json v = json::parse(text, nullptr, false);
  if (tag != Tag::Tensor) {
    if (v.is_boolean() && tag == Tag::Bool) out = EValue(v.get<bool>());
    else if (v.is_number_integer() && tag == Tag::Int) out = EValue(v.get<int64_t>());
    else if (v.is_number() && tag == Tag::Double) out = EValue(v.get<double>());
    else return std::string("the input is ") + (tag == Tag::Int ? "an int" : tag == Tag::Bool ? "a bool" : "a float") + ", not " + text;
    return "";
  }
  if (v.is_discarded() || v.is_string()) {  // a tensor spec
    const InputSpec spec = ParseInputSpec(v.is_string() ? v.get<std::string>() : text);
    keep.push_back(MakeInput(*info, &spec, state));
  } else {
    std::vector<int64_t> shape;
    std::vector<double> values;
    if (std::string why = FlattenNested(v, 0, shape, values); !why.empty()) return why;
    std::vector<executorch::aten::SizesType> sizes(shape.begin(), shape.end());
    keep.push_back(executorch::extension::zeros(sizes, info->scalar_type()));
    const DtypeInfo* d = DtypeByValue(static_cast<int>(info->scalar_type()));
    if (!d) return "a dtype tsctl does not know";
    for (size_t i = 0; i < values.size(); ++i) PutElement(keep.back()->mutable_data_ptr(), *d, static_cast<ssize_t>(i), values[i]);
  }
  out = EValue(keep.back());
  return "";
}

// `v` as the next input, described as the result describes it.
void Take(const EValue& v, std::vector<EValue>& inputs, json& described) {
  inputs.push_back(v);
  uint64_t unused = 0;
  described.push_back(DescribeValue(v, unused));
}

// Input `i` from --arg `text`: pushed to `inputs`, or false with m["input_error"].
bool ArgInput(const executorch::runtime::MethodMeta& meta, size_t i, Tag tag, const std::string& text,
              std::vector<EValue>& inputs, std::vector<executorch::extension::TensorPtr>& keep, uint64_t& state,
              json& described, json& m) {
  auto info = tag == Tag::Tensor ? meta.input_tensor_meta(i)
                                 : executorch::runtime::Result<executorch::runtime::TensorInfo>(executorch::runtime::Error::NotFound);
  EValue v;
  std::string why;
  try {
    why = tag == Tag::Tensor && !info.ok() ? ErrorName(info.error()) : ValueFromArg(text, tag, info.ok() ? &*info : nullptr, v, keep, state);
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!why.empty()) {
    m["input_error"] = "input " + std::to_string(i) + " (--arg " + text + "): " + why;
    return false;
  }
  Take(v, inputs, described);
  return true;
}

}  // namespace

bool MakeInputs(executorch::extension::Module& module, const std::string& name, const executorch::runtime::MethodMeta& meta,
                const std::vector<InputSpec>& specs, const std::vector<std::string>& args, const NumpyArrays* arrays,
                std::vector<EValue>& inputs, std::vector<executorch::extension::TensorPtr>& keep, json& described,
                json& m) {
  size_t next = 0;  // --load-inputs: the next array
  auto from_file = [&](size_t i, bool scalar) {
    if (next >= arrays->size()) {
      m["input_error"] = "--load-inputs has " + std::to_string(arrays->size()) + " arrays; input " + std::to_string(i) + " has none";
      return false;
    }
    const auto& [array_name, array] = (*arrays)[next++];
    EValue v;
    if (std::string why = ValueFromArray(array.first, array.second, scalar, v, keep); !why.empty()) {
      m["input_error"] = "input " + std::to_string(i) + " from array " + array_name + ": " + why;
      return false;
    }
    Take(v, inputs, described);
    return true;
  };
  // The method, for the values it holds for its scalar inputs.
  auto loaded = module.method(name);
  const executorch::runtime::Method* method = loaded.ok() ? *loaded : nullptr;
  uint64_t state = 0x5eed;
  for (size_t i = 0; i < meta.num_inputs(); ++i) {
    auto tag = meta.input_tag(i);
    if (!tag.ok()) {
      m["input_error"] = "input " + std::to_string(i) + ": " + ErrorName(tag.error());
      return false;
    }
    if (arrays && (*tag == Tag::Tensor || *tag == Tag::Int || *tag == Tag::Double || *tag == Tag::Bool)) {
      if (!from_file(i, *tag != Tag::Tensor)) return false;
    } else if (i >= specs.size() && i - specs.size() < args.size()) {  // --arg: the positions after --input's
      if (!ArgInput(meta, i, *tag, args[i - specs.size()], inputs, keep, state, described, m)) return false;
    } else if (*tag == Tag::Tensor) {
      auto info = meta.input_tensor_meta(i);
      if (!info.ok()) {
        m["input_error"] = "input " + std::to_string(i) + ": " + ErrorName(info.error());
        return false;
      }
      // --input fills the first positions, as for TorchScript.
      keep.push_back(MakeInput(*info, i < specs.size() ? &specs[i] : nullptr, state));
      inputs.emplace_back(keep.back());
      described.push_back({{"kind", "tensor"},
                           {"dtype", DtypeNameOf(static_cast<int>(keep.back()->scalar_type()))},
                           {"shape", std::vector<int64_t>(keep.back()->sizes().begin(), keep.back()->sizes().end())}});
    } else if (*tag == Tag::Int || *tag == Tag::Double || *tag == Tag::Bool) {
      // A scalar input is the value the program holds for it: ExecuTorch
      // refuses any other ("should have the same value as the input_evalue").
      EValue v = method ? method->get_input(i) : EValue();
      if (v.isNone()) v = *tag == Tag::Int ? EValue(int64_t{1}) : *tag == Tag::Double ? EValue(1.0) : EValue(true);
      Take(v, inputs, described);
    } else if (*tag == Tag::None) {
      inputs.emplace_back();
      described.push_back({{"kind", "none"}});
    } else {
      m["input_error"] = "input " + std::to_string(i) + " is of a kind tsctl cannot make (tag " +
                         std::to_string(static_cast<int>(*tag)) + ")";
      return false;
    }
  }
  if (arrays && next != arrays->size()) {
    m["input_error"] = "--load-inputs has " + std::to_string(arrays->size()) + " arrays, the method takes " + std::to_string(next);
    return false;
  }
  return true;
}

}  // namespace tsctl
