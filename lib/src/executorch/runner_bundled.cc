// tsctl-pte-runner --bundled: a bundled program's (.bpte) test cases run on
// ExecuTorch's runtime and compared as ExecuTorch's own verifier compares
// them (devtools/bundled_program/bundled_program.cpp: verify_method_outputs,
// not in the C++ SDK): each case's inputs set, the method executed, every
// output against the expected one: the same dtype and sizes, then float,
// double and half element by element (|want - got| <= atol + |rtol * got|,
// NaN equal to NaN, an infinity to one of its sign), other dtypes byte for
// byte. The .bpte is read by tsctl's own reader (tsctl/pte.h), which checks
// every offset; the program inside is handed to the runtime through a
// BufferDataLoader.
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "runner_support.h"
#include "sandbox.h"
#include "tsctl/dtype.h"
#include "tsctl/pte.h"

namespace tsctl {
namespace {

using ::executorch::extension::Module;
using ::executorch::extension::TensorPtr;
using ::executorch::runtime::EValue;
using ::executorch::runtime::Error;
using nlohmann::json;

constexpr size_t kMaxDim = 16;  // ExecuTorch's bundled verifier's limit

// Bytes a bundled tensor's values take, or why they cannot be set.
std::string TensorBytes(const PteBundledValue& v, uint64_t& bytes) {
  const DtypeInfo* d = DtypeByValue(v.scalar_type);
  if (!d || d->size == 0) return "dtype " + DtypeNameOf(v.scalar_type) + " is not one ExecuTorch sets";
  if (v.sizes.size() > kMaxDim) return "rank " + std::to_string(v.sizes.size()) + " is over ExecuTorch's 16";
  uint64_t numel = 1;
  for (int64_t s : v.sizes) {
    if (s < 0) return "a negative size (" + std::to_string(s) + ")";
    if (s && numel > UINT64_MAX / static_cast<uint64_t>(s)) return "sizes whose product overflows";
    numel *= static_cast<uint64_t>(s);
  }
  if (numel > v.data_size / d->size) {
    return std::to_string(numel) + " elements of " + d->name + " need more than its " + std::to_string(v.data_size) + " bytes";
  }
  bytes = numel * d->size;
  if (!v.dim_order.empty()) {
    std::vector<int64_t> sorted = v.dim_order;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (sorted.size() != v.sizes.size() || sorted[i] != static_cast<int64_t>(i)) return "a dim order that is no permutation of its dims";
    }
  }
  return "";
}

// A case's inputs as EValues (`keep` holds the tensors); "" or why not.
std::string CaseInputs(const PteTestCase& c, const std::string& bytes, size_t method_inputs, std::vector<EValue>& inputs,
                       std::vector<TensorPtr>& keep) {
  if (c.input_values.size() != method_inputs) {
    return "the case has " + std::to_string(c.input_values.size()) + " inputs, the method takes " + std::to_string(method_inputs);
  }
  for (size_t i = 0; i < c.input_values.size(); ++i) {
    const PteBundledValue& v = c.input_values[i];
    switch (v.kind) {
      case PteValueKind::kTensor: {
        uint64_t n = 0;
        if (std::string why = TensorBytes(v, n); !why.empty()) return "input " + std::to_string(i) + ": " + why;
        std::vector<executorch::aten::SizesType> sizes(v.sizes.begin(), v.sizes.end());
        std::vector<executorch::aten::DimOrderType> order(v.dim_order.begin(), v.dim_order.end());
        std::vector<uint8_t> data(bytes.begin() + static_cast<ptrdiff_t>(v.data_offset),
                                  bytes.begin() + static_cast<ptrdiff_t>(v.data_offset + n));
        keep.push_back(executorch::extension::make_tensor_ptr(std::move(sizes), std::move(data), std::move(order), {},
                                                              static_cast<executorch::aten::ScalarType>(v.scalar_type)));
        inputs.emplace_back(keep.back());
        break;
      }
      case PteValueKind::kInt: inputs.emplace_back(v.int_value); break;
      case PteValueKind::kBool: inputs.emplace_back(v.int_value != 0); break;
      case PteValueKind::kDouble: inputs.emplace_back(v.double_value); break;
      default: return "input " + std::to_string(i) + " is of a kind the bundled schema does not define";
    }
  }
  return "";
}

// ExecuTorch's elem_is_close: `want` the bundle's, `got` the method's.
bool Close(double want, double got, double rtol, double atol) {
  if (std::isnan(want) && std::isnan(got)) return true;
  if (!std::isfinite(want) && !std::isfinite(got) && (want > 0) == (got > 0)) return true;
  if (rtol == 0 && atol == 0) return want == got;
  const double error = std::abs(want - got);
  return std::isfinite(error) && error <= atol + std::abs(rtol * got);
}

double Element(const void* p, executorch::aten::ScalarType type, size_t i) {
  using executorch::aten::ScalarType;
  if (type == ScalarType::Float) {
    float f;
    std::memcpy(&f, static_cast<const char*>(p) + 4 * i, 4);
    return f;
  }
  if (type == ScalarType::Double) {
    double d;
    std::memcpy(&d, static_cast<const char*>(p) + 8 * i, 8);
    return d;
  }
  executorch::aten::Half h;
  std::memcpy(&h, static_cast<const char*>(p) + 2 * i, 2);
  return static_cast<float>(h);
}

// One output against the bundle's expected value.
json CompareOutput(const PteBundledValue& want, const EValue& got, const std::string& bytes, double rtol, double atol) {
  using executorch::aten::ScalarType;
  json o = {{"rtol", rtol}, {"atol", atol}};
  auto differ = [&](const std::string& why) {
    o["close"] = false;
    o["why"] = why;
    return o;
  };
  if (want.kind != PteValueKind::kTensor) {
    o["kind"] = want.kind == PteValueKind::kDouble ? "float" : want.kind == PteValueKind::kBool ? "bool" : "int";
    if (want.kind == PteValueKind::kDouble && got.isDouble()) {
      o["close"] = Close(want.double_value, got.toDouble(), rtol, atol);
      o["max_abs"] = std::abs(want.double_value - got.toDouble());
    } else if (want.kind == PteValueKind::kInt && got.isInt()) {
      o["close"] = want.int_value == got.toInt();
    } else if (want.kind == PteValueKind::kBool && got.isBool()) {
      o["close"] = (want.int_value != 0) == got.toBool();
    } else {
      return differ("the bundle expects a " + o["kind"].get<std::string>() + ", the method returned another kind");
    }
    if (!o["close"].get<bool>()) o["why"] = "the value differs";
    return o;
  }
  o["kind"] = "tensor";
  if (!got.isTensor()) return differ("the bundle expects a tensor, the method returned another kind");
  const auto& t = got.toTensor();
  const std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
  o["dtype"] = DtypeNameOf(static_cast<int>(t.scalar_type()));
  o["shape"] = shape;
  if (static_cast<int>(t.scalar_type()) != want.scalar_type) return differ("dtype " + o["dtype"].get<std::string>() + ", the bundle expects " + DtypeNameOf(want.scalar_type));
  if (shape != want.sizes) return differ("its sizes differ from the bundle's");
  uint64_t n = 0;
  if (std::string why = TensorBytes(want, n); !why.empty()) return differ("the expected value: " + why);
  if (!want.dim_order.empty() &&
      !std::equal(want.dim_order.begin(), want.dim_order.end(), t.dim_order().begin(), t.dim_order().end())) {
    return differ("its dim order differs from the bundle's");
  }
  const char* w = bytes.data() + want.data_offset;
  const void* g = t.const_data_ptr();
  const size_t numel = static_cast<size_t>(t.numel());
  const bool floating = t.scalar_type() == ScalarType::Float || t.scalar_type() == ScalarType::Double ||
                        t.scalar_type() == ScalarType::Half;
  const size_t elem = numel ? n / numel : 0;
  size_t mismatched = 0;
  double max_abs = 0;
  json first;
  for (size_t i = 0; i < numel; ++i) {
    bool ok;
    if (floating) {
      const double a = Element(w, t.scalar_type(), i), b = Element(g, t.scalar_type(), i);
      ok = Close(a, b, rtol, atol);
      if (std::isfinite(a - b)) max_abs = std::max(max_abs, std::abs(a - b));
      if (!ok && first.is_null()) first = {{"at", i}, {"want", a}, {"got", b}};
    } else {
      ok = std::memcmp(w + i * elem, static_cast<const char*>(g) + i * elem, elem) == 0;
      if (!ok && first.is_null()) first = {{"at", i}};
    }
    mismatched += !ok;
  }
  o["numel"] = numel;
  o["mismatched"] = mismatched;
  o["close"] = mismatched == 0;
  if (floating) o["max_abs"] = max_abs;
  else o["bitwise"] = true;
  if (!first.is_null()) o["first"] = first;
  return o;
}

json RunCase(Module& module, const std::string& method, size_t method_inputs, const PteTestCase& c, size_t index,
             const std::string& bytes, const BundledPlan& plan) {
  json r = {{"index", index}};
  std::vector<EValue> inputs;
  std::vector<TensorPtr> keep;
  if (std::string why = CaseInputs(c, bytes, method_inputs, inputs, keep); !why.empty()) {
    r["input_error"] = why;
    return r;
  }
  const auto start = std::chrono::steady_clock::now();
  auto out = module.execute(method, inputs);
  r["ns"] = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  if (!out.ok()) {
    r["run_error"] = ErrorName(out.error());
    return r;
  }
  r["ran"] = true;
  r["returned"] = out->size();
  r["expected"] = c.expected_values.size();
  json outputs = json::array();
  for (size_t i = 0; i < c.expected_values.size() && i < out->size(); ++i) {
    const double rtol = plan.rtol.empty() ? 1e-5 : plan.rtol[std::min(i, plan.rtol.size() - 1)];
    const double atol = plan.atol.empty() ? 1e-8 : plan.atol[std::min(i, plan.atol.size() - 1)];
    outputs.push_back(CompareOutput(c.expected_values[i], (*out)[i], bytes, rtol, atol));
  }
  r["outputs"] = outputs;
  return r;
}

// The whole file, at an address the FlatBuffers verifier accepts for the
// program inside (its `program` field is 32-byte aligned in the file).
std::shared_ptr<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return nullptr;
  auto bytes = std::make_shared<std::string>();
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return bytes;
}

}  // namespace

json RunBundled(const std::string& path, const std::vector<std::string>& data, const std::string& only,
                const BundledPlan& plan, const char* method_mark, bool sandbox) {
  json result;
  const std::shared_ptr<std::string> bytes = ReadWhole(path);
  if (!bytes) return {{"program_error", "cannot read " + path}};
  PteFile file;
  try {
    file = ReadPteBytes(*bytes, path);
  } catch (const std::exception& e) {
    return {{"program_error", e.what()}};
  }
  if (file.kind != PteKind::kBundled) return {{"program_error", "not a bundled program"}};
  // An aligned copy of the program for the loader (the file's buffer is
  // only as aligned as the allocator makes it).
  const size_t size = static_cast<size_t>(file.bundled.program_bytes);
  std::unique_ptr<void, decltype(&std::free)> program(std::aligned_alloc(64, (size + 63) / 64 * 64), &std::free);
  if (!program) return {{"program_error", "out of memory for the program"}};
  std::memcpy(program.get(), bytes->data() + file.bundled.program_offset, size);
  std::unique_ptr<executorch::runtime::DataLoader> data_map;
  if (!data.empty()) {
    auto loader = executorch::extension::FileDataLoader::from(data.front().c_str());
    if (!loader.ok()) return {{"program_error", "its data file: " + ErrorName(loader.error())}};
    data_map = std::make_unique<executorch::extension::FileDataLoader>(std::move(*loader));
  }
  Module module(std::make_unique<executorch::extension::BufferDataLoader>(program.get(), size), nullptr, nullptr, nullptr,
                std::move(data_map));
  if (Error e = module.load(); e != Error::Ok) return {{"program_error", ErrorName(e)}};
  if (sandbox) LockFileWrites();
  json methods = json::array();
  for (const PteTestSuite& suite : file.bundled.suites) {
    if (!only.empty() && suite.method_name != only) continue;
    json m = {{"name", suite.method_name}};
    std::fprintf(stderr, "%s%s\n", method_mark, suite.method_name.c_str());
    std::fflush(stderr);
    if (Error e = module.load_method(suite.method_name); e != Error::Ok) {
      m["load_error"] = ErrorName(e);
      methods.push_back(m);
      continue;
    }
    auto meta = module.method_meta(suite.method_name);
    if (!meta.ok()) {
      m["load_error"] = "its metadata: " + ErrorName(meta.error());
      methods.push_back(m);
      continue;
    }
    json cases = json::array();
    for (size_t i = 0; plan.run && i < suite.cases.size(); ++i) {
      cases.push_back(RunCase(module, suite.method_name, meta->num_inputs(), suite.cases[i], i, *bytes, plan));
    }
    if (plan.run) m["cases"] = cases;
    methods.push_back(m);
  }
  result["methods"] = methods;
  return result;
}

}  // namespace tsctl
