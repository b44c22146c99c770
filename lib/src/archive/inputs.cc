#include "tsctl/inputs.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "tsctl/dtype.h"
#include "tsctl/error.h"
#include "json_input.h"
#include "stored_inputs.h"
#include "tsctl/pickle.h"
#include "storage_types.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

std::string NormalizeDtype(std::string d) {
  if (d == "float" || d == "f32") return "float32";
  if (d == "double" || d == "f64") return "float64";
  if (d == "half" || d == "f16") return "float16";
  if (d == "long" || d == "i64") return "int64";
  if (d == "int" || d == "i32") return "int32";
  return d;
}

// Shapes and dtypes of pickled tensors (_rebuild_tensor_v2 calls).
bool TensorSpecs(const std::vector<PyRef>& tensors, std::vector<InputSpec>& out) {
  for (const PyRef& t : tensors) {
    if (!t || t->kind != PyKind::kObject || t->items.size() < 3) return false;
    InputSpec spec;
    const PyRef& pid = t->items[0];
    if (pid->kind != PyKind::kPersistentId || pid->items.empty() || pid->items[0]->items.size() < 2) return false;
    const StorageDtype* dtype = DtypeOfStorage(pid->items[0]->items[1]->name);
    if (!dtype || !InputDtype(dtype->name)) return false;  // e.g. quantized: not an input dtype
    spec.dtype = dtype->name;
    for (const PyRef& d : t->items[2]->items) spec.shape.push_back(d->integer);
    out.push_back(spec);
  }
  return !tensors.empty();
}

// The "inputs" list of extra/tsctl_reference.pt's pickle; null if it has
// none. Throws tsctl::Error for a record that is not a torch.save archive.
PyRef RecordedInputList(const Archive& archive) {
  Archive ref = Archive::OpenAny(MakeMemorySource(archive.Read(kRecordedReference)));
  PyRef v = ParsePickle(ref.Read("data.pkl", 16 << 20));
  while (v && v->kind == PyKind::kObject && !v->items.empty()) v = v->items[0];
  PyRef list = v ? v->Get("inputs") : nullptr;
  while (list && list->kind == PyKind::kObject && !list->items.empty()) list = list->items[0];
  return list && (list->kind == PyKind::kList || list->kind == PyKind::kTuple) ? list : nullptr;
}

}  // namespace

std::string RecordedInputs(const Archive& archive) {
  if (!archive.Has(kRecordedReference)) return {};
  try {
    if (RecordedInputList(archive)) return archive.Read(kRecordedReference);
  } catch (const Error&) {
  }
  return {};
}

std::string RecordedInputsOrigin(const Archive& archive) {
  if (!archive.Has(kReferenceOriginRecordPath)) return {};
  try {
    const nlohmann::json j = nlohmann::json::parse(archive.Read(kReferenceOriginRecordPath, 64 << 10), nullptr, false);
    if (!j.is_object() || !j.contains("input_source") || !j["input_source"].is_string()) return {};
    std::string from = j["input_source"].get<std::string>();
    if (from.empty() || from.size() > 200) return {};
    if (from == "inferred" || from.rfind("inferred ", 0) == 0) return "recorded on inferred inputs (a guess, not the model's own)";
    return "recorded on inputs from " + from;
  } catch (const Error&) {
    return {};
  }
}

std::string InputSpec::ToString() const {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  if (shape.empty()) s = "scalar";
  s += ":" + dtype;
  if (channels_last) s += ":channels_last";
  auto num = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  switch (fill) {
    case Fill::kRandom: break;
    case Fill::kZeros: s += ":zeros"; break;
    case Fill::kOnes: s += ":ones"; break;
    case Fill::kRandint: s += ":randint:" + num(low) + ":" + num(high); break;
    case Fill::kConstant: s += ":fill:" + num(value); break;
    case Fill::kUniform: s += ":uniform:" + num(low) + ":" + num(high); break;
  }
  return s;
}

uint64_t InputSpec::Bytes() const {
  // tsctl/dtype.h's size; a dtype it does not know counts as the widest (16
  // bytes), so that a size limit is never passed by an unknown name.
  const DtypeInfo* d = DtypeByName(dtype);
  uint64_t size = d ? d->size : 16;
  for (int64_t d : shape) {
    if (d != 0 && size > UINT64_MAX / static_cast<uint64_t>(d)) return UINT64_MAX;
    size *= static_cast<uint64_t>(d);
  }
  return size;
}

void RequireOneInputSource(bool given, const std::string& load_inputs_path, const std::string& given_flags) {
  if (given && !load_inputs_path.empty()) throw Error(ErrorKind::kUsage, "--load-inputs cannot be combined with " + given_flags);
}

void RequireOneDataSource(bool given, const std::string& load_inputs_path) {
  if (given) throw Error(ErrorKind::kUsage, "--data-loader-script cannot be combined with --input/--arg");
  if (!load_inputs_path.empty()) throw Error(ErrorKind::kUsage, "--data-loader-script cannot be combined with --load-inputs");
}

InputSpec ParseInputSpec(const std::string& text) {
  auto bad = [&](const std::string& why) -> Error {
    return Error(ErrorKind::kUsage, "bad input spec '" + text + "': " + why +
                                        " (expected e.g. 1x3x224x224:float32[:channels_last][:zeros|ones|random|randint:LOW:HIGH|uniform:LOW:HIGH|fill:VALUE])");
  };
  InputSpec spec;
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts[0] != "scalar") {
    size_t pos = 0;
    const std::string& dims = parts[0];
    if (dims.empty()) throw bad("no shape");
    while (pos <= dims.size()) {
      size_t x = dims.find('x', pos);
      std::string d = dims.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
      if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos || d.size() > 9) {
        throw bad("dimension '" + d + "' is not a whole number");
      }
      spec.shape.push_back(std::stoll(d));
      if (x == std::string::npos) break;
      pos = x + 1;
    }
  }
  if (parts.size() >= 2 && !parts[1].empty()) spec.dtype = NormalizeDtype(parts[1]);
  if (!InputDtype(spec.dtype)) throw bad("unknown dtype '" + parts[1] + "'");
  auto number = [&](size_t i, const char* what) {
    if (i >= parts.size()) throw bad(std::string(what) + " needs a value");
    char* end = nullptr;
    double v = std::strtod(parts[i].c_str(), &end);
    if (parts[i].empty() || *end != '\0' || !std::isfinite(v)) throw bad(std::string(what) + " value '" + parts[i] + "' is not a number");
    return v;
  };
  bool filled = false;
  for (size_t i = 2; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p == "channels_last") {
      if (spec.shape.size() != 4) throw bad("channels_last needs a 4-d shape");
      spec.channels_last = true;
      continue;
    }
    if (filled) throw bad("more than one fill ('" + p + "')");
    filled = true;
    if (p == "random") {
      spec.fill = InputSpec::Fill::kRandom;
    } else if (p == "zeros") {
      spec.fill = InputSpec::Fill::kZeros;
    } else if (p == "ones") {
      spec.fill = InputSpec::Fill::kOnes;
    } else if (p == "randint") {
      spec.fill = InputSpec::Fill::kRandint;
      spec.low = number(i + 1, "randint");
      spec.high = number(i + 2, "randint");
      if (spec.high <= spec.low) throw bad("randint needs LOW < HIGH");
      i += 2;
    } else if (p == "uniform") {
      if (!IsFloatingDtype(spec.dtype)) throw bad("uniform needs a floating dtype (randint:LOW:HIGH fills integers)");
      spec.fill = InputSpec::Fill::kUniform;
      spec.low = number(i + 1, "uniform");
      spec.high = number(i + 2, "uniform");
      if (spec.high < spec.low) throw bad("uniform needs LOW <= HIGH");
      i += 2;
    } else if (p == "fill") {
      spec.fill = InputSpec::Fill::kConstant;
      spec.value = number(i + 1, "fill");
      i += 1;
    } else {
      throw bad("unknown field '" + p + "'");
    }
  }
  return spec;
}

bool IsFloatingDtype(const std::string& dtype) { return dtype.rfind("float", 0) == 0 || dtype == "bfloat16"; }

ArgSpec ParseArgSpec(const std::string& text) {
  ArgSpec arg;
  size_t eq = text.find('=');
  const bool named = eq != std::string::npos && IsIdentifier(text.substr(0, eq));
  if (named) {
    arg.name = text.substr(0, eq);
    arg.value = text.substr(eq + 1);
  } else {
    arg.value = text;
  }
  if (arg.value.empty()) throw Error(ErrorKind::kUsage, "bad --arg '" + text + "': no value (expected NAME=VALUE or VALUE)");
  return arg;
}

ArchiveInputs InputsFromArchive(const Archive& archive, const std::string& method) {
  ArchiveInputs result;
  if (archive.Has(kInputsRecordPath)) {
    const std::string text = archive.Read(kInputsRecordPath, 1 << 20);
    const nlohmann::json j = AcceptJsonInput(text) ? nlohmann::json::parse(text) : nlohmann::json();
    if (j.is_object() && j.contains(method) && j[method].is_array()) {
      for (const auto& s : j[method]) {
        if (s.is_string()) result.inputs.push_back(ParseInputSpec(s.get<std::string>()));
      }
      result.source = kInputsRecordPath;
      return result;
    }
  }
  if (archive.Has(kRecordedReference)) {
    // validate --record-reference: a torch.save-format ZIP whose data.pkl is
    // {"inputs": [tensors], "outputs": ...}; the shapes are in the pickle.
    try {
      PyRef list = RecordedInputList(archive);
      std::vector<InputSpec> specs;
      if (list && TensorSpecs(list->items, specs)) {
        result.inputs = specs;
        result.source = kReferenceRecordPath;
        return result;
      }
    } catch (const Error&) {
    }
  }
  if (archive.Has("traced_inputs.pkl")) {
    PyRef v = ParsePickle(archive.Read("traced_inputs.pkl", 16 << 20));
    // {method: [tensor, ...]}, wrapped in restore_type_tag.
    while (v && v->kind == PyKind::kObject && !v->items.empty()) v = v->items[0];
    PyRef list = v ? v->Get(method) : nullptr;
    while (list && list->kind == PyKind::kObject && !list->items.empty()) list = list->items[0];
    if (list && (list->kind == PyKind::kList || list->kind == PyKind::kTuple)) {
      if (!TensorSpecs(list->items, result.inputs)) return {};
      result.source = "traced_inputs.pkl";
    }
  }
  return result;
}

ArchiveInputs StoredInputs(const Archive& archive, const std::string& key) {
  try {
    return InputsFromArchive(archive, key);
  } catch (const Error&) {
    return {};
  }
}

}  // namespace tsctl
