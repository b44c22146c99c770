#include "tensors.h"

#include "../archive/storage_types.h"

#include <sstream>

#include "compare_values.h"
#include "tsctl/error.h"

namespace tsctl {

at::ScalarType AtScalarType(const DtypeInfo* dtype) {
  if (!dtype) return at::ScalarType::Undefined;
  const int value = DtypeValue(*dtype);
  if (value < 0 || value >= static_cast<int>(at::ScalarType::NumOptions)) return at::ScalarType::Undefined;
  const auto type = static_cast<at::ScalarType>(value);
  return std::string(c10::toString(type)) == dtype->c10 ? type : at::ScalarType::Undefined;
}

at::ScalarType ScalarTypeOf(const std::string& dtype) {
  const at::ScalarType type = AtScalarType(InputDtype(dtype));
  if (type == at::ScalarType::Undefined) throw Error(ErrorKind::kUsage, "unsupported dtype " + dtype);
  return type;
}

at::Tensor MakeInput(const InputSpec& spec, at::Generator& gen, const at::Device& device) {
  at::ScalarType type = ScalarTypeOf(spec.dtype);
  at::Tensor t;
  auto options = at::TensorOptions().dtype(type);
  if (spec.fill == InputSpec::Fill::kZeros) {
    t = at::zeros(spec.shape, options);
  } else if (spec.fill == InputSpec::Fill::kOnes) {
    t = at::ones(spec.shape, options);
  } else if (spec.fill == InputSpec::Fill::kConstant) {
    t = at::full(spec.shape, spec.value, options);
  } else if (spec.fill == InputSpec::Fill::kRandint) {
    t = at::randint(static_cast<int64_t>(spec.low), static_cast<int64_t>(spec.high), spec.shape, gen,
                    at::TensorOptions().dtype(at::kLong)).to(type);
  } else if (spec.fill == InputSpec::Fill::kUniform) {
    // As torch.rand(...) * (high - low) + low: the same values in Python.
    t = (at::rand(spec.shape, gen, at::TensorOptions().dtype(at::kFloat)) * (spec.high - spec.low) + spec.low).to(type);
  } else if (at::isFloatingType(type)) {
    t = at::randn(spec.shape, gen, at::TensorOptions().dtype(at::kFloat)).to(type);
  } else if (type == at::kBool) {
    t = at::randint(0, 2, spec.shape, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
  } else {
    t = at::randint(0, 10, spec.shape, gen, at::TensorOptions().dtype(at::kLong)).to(type);
  }
  if (spec.channels_last) t = t.contiguous(at::MemoryFormat::ChannelsLast);
  return t.to(device);
}

std::vector<std::pair<std::string, at::Tensor>> FlattenTensors(const c10::IValue& value, const std::string& name) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  if (value.isTensor()) {
    out.emplace_back(name, value.toTensor());
  } else if (value.isTuple()) {
    const auto& elems = value.toTupleRef().elements();
    for (size_t i = 0; i < elems.size(); ++i) {
      auto sub = FlattenTensors(elems[i], name + "[" + std::to_string(i) + "]");
      out.insert(out.end(), sub.begin(), sub.end());
    }
  } else if (value.isList()) {
    auto list = value.toListRef();
    for (size_t i = 0; i < list.size(); ++i) {
      auto sub = FlattenTensors(list[i], name + "[" + std::to_string(i) + "]");
      out.insert(out.end(), sub.begin(), sub.end());
    }
  } else if (value.isGenericDict()) {
    for (const auto& kv : value.toGenericDict()) {
      std::ostringstream key;
      if (kv.key().isString()) key << "'" << kv.key().toStringRef() << "'";
      else key << kv.key();
      auto sub = FlattenTensors(kv.value(), name + "[" + key.str() + "]");
      out.insert(out.end(), sub.begin(), sub.end());
    }
  }
  return out;
}

std::string Describe(const at::Tensor& t) {
  std::ostringstream s;
  s << c10::toString(t.scalar_type()) << t.sizes();
  return s.str();
}

std::optional<TensorDesc> DescOf(const c10::IValue& value) {
  if (!value.isTensor() || !value.toTensor().defined()) return std::nullopt;
  const at::Tensor& t = value.toTensor();
  // c10::toString(ScalarType) names the storage class without "Storage".
  const StorageDtype* d = DtypeOfStorage(std::string(c10::toString(t.scalar_type())) + "Storage");
  if (!d) return std::nullopt;
  return TensorDesc{d->name, t.sizes().vec(), t.device().str()};
}

std::string DescribeValue(const c10::IValue& v) { return v.isTensor() ? Describe(v.toTensor()) : KindOf(v); }

}  // namespace tsctl
