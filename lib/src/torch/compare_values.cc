#include "compare_values.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <sstream>

#include "tensors.h"
#include "tsctl/escape.h"

namespace tsctl {
namespace {

double Pick(const std::vector<double>& v, size_t i) { return v.empty() ? 0 : v[std::min(i, v.size() - 1)]; }

// A string the model returned, quoted as JSON writes it; bytes that are not
// UTF-8 written \xNN (nlohmann's dump throws on them).
std::string Quoted(const std::string& s) { return nlohmann::json(ValidUtf8(s)).dump(); }

std::string Key(const c10::IValue& k) {
  if (k.isString()) return "[" + Quoted(k.toStringRef()) + "]";
  std::ostringstream s;
  s << "[" << k << "]";
  return s.str();
}

std::string Short(const c10::IValue& v) {
  std::ostringstream s;
  if (v.isString()) {
    s << Quoted(v.toStringRef());
  } else if (v.isDouble()) {
    s << v.toDouble();
  } else if (v.isTensor()) {
    s << Describe(v.toTensor());
  } else if (v.isInt() || v.isBool() || v.isNone()) {
    s << v;
  } else {
    s << KindOf(v);
  }
  std::string r = s.str();
  return r.size() > 60 ? r.substr(0, 57) + "..." : r;
}

void Leaf(std::vector<ReferenceLeaf>& out, const std::string& path, bool pass, std::string error) {
  ReferenceLeaf l;
  l.name = path;
  l.pass = pass;
  l.error = std::move(error);
  out.push_back(std::move(l));
}

std::vector<c10::IValue> ValueItems(const c10::IValue& v) {
  std::vector<c10::IValue> out;
  if (v.isList()) {
    for (const auto& e : v.toListRef()) out.push_back(e);
  } else {
    for (const auto& e : v.toTupleRef().elements()) out.push_back(e);
  }
  return out;
}

bool IsNumber(const c10::IValue& v) { return v.isDouble() || v.isInt() || v.isBool(); }

}  // namespace

std::string KindOf(const c10::IValue& v) {
  if (v.isTensor()) return "Tensor";
  if (v.isObject()) return v.toObjectRef().type()->annotation_str();
  return v.type()->annotation_str();
}

namespace {

// Two tensors, element by element within the tolerances: statistics of the
// differences, NaN on one side only named, and the smallest tolerances that
// would pass.
ReferenceLeaf CompareTensors(const at::Tensor& g0, const at::Tensor& w0, const std::string& path, double rtol, double atol) {
  ReferenceLeaf c;
  c.name = path;
  c.is_tensor = true;
  c.rtol = rtol;
  c.atol = atol;
  if (!g0.defined() || !w0.defined()) {
    c.pass = g0.defined() == w0.defined();
    if (!c.pass) c.error = "an undefined tensor on one side";
  } else if (!g0.sizes().equals(w0.sizes())) {
    c.error = "shape " + Describe(g0) + " vs reference " + Describe(w0);
  } else if (g0.is_quantized() || w0.is_quantized() || g0.is_complex() || w0.is_complex()) {
    at::Tensor g = g0.is_quantized() ? g0.dequantize() : g0, w = w0.is_quantized() ? w0.dequantize() : w0;
    c.pass = g.is_complex() == w.is_complex() && at::allclose(g.to(g.is_complex() ? at::kComplexDouble : at::kDouble),
                                                             w.to(w.is_complex() ? at::kComplexDouble : at::kDouble), rtol, atol);
  } else {
    at::Tensor g = g0.to(at::kDouble), w = w0.to(at::kDouble);
    at::Tensor diff = (g - w).abs();
    // NaN in the same places counts as equal, and so does the same
    // infinity (Inf - Inf is NaN). NaN on one side only is no difference
    // a number can give: it is counted and named.
    at::Tensor nan_g = at::isnan(g), nan_w = at::isnan(w);
    diff = at::where((nan_g & nan_w) | (g == w), at::zeros_like(diff), diff);
    const int64_t one_sided_nan = (nan_g ^ nan_w).sum().item<int64_t>();
    at::Tensor rel = diff / w.abs().clamp_min(1e-12);
    if (diff.numel()) {
      // Statistics over the elements that are numbers on both sides.
      at::Tensor finite = at::isfinite(diff);
      at::Tensor d = diff.masked_select(finite), r = rel.masked_select(finite);
      if (d.numel()) {
        c.max_abs = d.max().item<double>();
        c.mean_abs = d.mean().item<double>();
        c.max_rel = r.max().item<double>();
        c.mean_rel = r.mean().item<double>();
      }
    }
    // A difference that is not a number (NaN on one side, an infinity
    // against a number) never passes, whatever the tolerance.
    c.pass = ((diff == 0) | ((diff <= atol + rtol * w.abs()) & at::isfinite(diff))).all().item<bool>();
    if (one_sided_nan > 0) {
      c.error = std::to_string(one_sided_nan) + " element" + (one_sided_nan == 1 ? "" : "s") +
                " NaN on one side only";
    }
    if (!c.pass && diff.numel() && at::isfinite(diff).all().item<bool>()) {
      // Polygraphy's "minimum required tolerance": the smallest atol (at
      // this rtol) and rtol (at this atol) that would pass; no rtol passes
      // where the reference is 0 and they differ by more than atol (-1).
      c.has_min_tolerance = true;
      c.min_atol = std::max(0.0, (diff - rtol * w.abs()).max().item<double>());
      const bool zero_blocks = ((diff > atol) & (w == 0)).any().item<bool>();
      c.min_rtol = zero_blocks ? -1 : std::max(0.0, ((diff - atol) / w.abs().clamp_min(1e-300)).max().item<double>());
    }
  }
  return c;
}

// Two dicts key by key: the reference's keys in its order, then the keys it lacks.
void CompareDicts(const c10::Dict<c10::IValue, c10::IValue>& g, const c10::Dict<c10::IValue, c10::IValue>& w,
                  const std::string& path, const Tolerances& tol, std::vector<ReferenceLeaf>& out) {
  for (const auto& kv : w) {
    if (!g.contains(kv.key())) {
      Leaf(out, path + Key(kv.key()), false, "missing (the reference has it)");
      continue;
    }
    CompareValues(g.at(kv.key()), kv.value(), path + Key(kv.key()), tol, out);
  }
  for (const auto& kv : g) {
    if (!w.contains(kv.key())) Leaf(out, path + Key(kv.key()), false, "not in the reference");
  }
}

}  // namespace


void CompareValues(const c10::IValue& got, const c10::IValue& want, const std::string& path, const Tolerances& tol,
                   std::vector<ReferenceLeaf>& out) {
  const size_t index = out.size();
  const double rtol = Pick(tol.rtol, index), atol = Pick(tol.atol, index);
  if (want.isTensor() && got.isTensor()) {
    out.push_back(CompareTensors(got.toTensor(), want.toTensor(), path, rtol, atol));
    return;
  }
  if (want.isDouble() && IsNumber(got) && !got.isBool()) {
    double g = got.isDouble() ? got.toDouble() : static_cast<double>(got.toInt()), w = want.toDouble();
    bool pass = (std::isnan(g) && std::isnan(w)) || std::fabs(g - w) <= atol + rtol * std::fabs(w);
    ReferenceLeaf c;
    c.name = path;
    c.pass = pass;
    c.rtol = rtol;
    c.atol = atol;
    c.max_abs = std::fabs(g - w);
    if (!pass) c.error = Short(got) + " vs reference " + Short(want);
    out.push_back(std::move(c));
    return;
  }
  if ((want.isInt() && got.isInt()) || (want.isBool() && got.isBool()) || (want.isString() && got.isString()) ||
      (want.isNone() && got.isNone()) || (want.isDevice() && got.isDevice())) {
    bool pass = got == want;
    Leaf(out, path, pass, pass ? "" : Short(got) + " vs reference " + Short(want));
    return;
  }
  if ((want.isList() || want.isTuple()) && (got.isList() || got.isTuple())) {
    std::vector<c10::IValue> g, w;
    g = ValueItems(got);
    w = ValueItems(want);
    if (g.size() != w.size()) {
      Leaf(out, path, false, "length " + std::to_string(g.size()) + " vs reference " + std::to_string(w.size()));
      return;
    }
    for (size_t i = 0; i < g.size(); ++i) CompareValues(g[i], w[i], path + "[" + std::to_string(i) + "]", tol, out);
    return;
  }
  if (want.isGenericDict() && got.isGenericDict()) {
    CompareDicts(got.toGenericDict(), want.toGenericDict(), path, tol, out);
    return;
  }
  if (want.isObject() || got.isObject()) {
    ReferenceLeaf c;
    c.name = path;
    c.compared = false;
    c.error = "cannot compare objects of " + KindOf(want.isObject() ? want : got);
    out.push_back(std::move(c));
    return;
  }
  // "List[int] [1, 2]", or the type alone where Short() prints just it.
  auto shown = [](const c10::IValue& v) {
    const std::string kind = KindOf(v), value = Short(v);
    return value == kind ? kind : kind + " " + value;
  };
  Leaf(out, path, false, shown(got) + " vs reference " + shown(want));
}

std::vector<OutputSummary> SummarizeOutputs(const c10::IValue& value, const std::string& path, size_t max_leaves) {
  std::vector<OutputSummary> out;
  std::function<void(const c10::IValue&, const std::string&)> walk = [&](const c10::IValue& v, const std::string& p) {
    if (out.size() >= max_leaves) return;
    if (v.isTuple() || v.isList()) {
      std::vector<c10::IValue> items = ValueItems(v);
      if (items.empty()) out.push_back({p, KindOf(v) + " (empty)", 0});
      for (size_t i = 0; i < items.size(); ++i) walk(items[i], p + "[" + std::to_string(i) + "]");
      return;
    }
    if (v.isGenericDict()) {
      auto d = v.toGenericDict();
      if (d.size() == 0) out.push_back({p, KindOf(v) + " (empty)", 0});
      for (const auto& kv : d) walk(kv.value(), p + Key(kv.key()));
      return;
    }
    OutputSummary s;
    s.name = p;
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      s.desc = t.defined() ? Describe(t) : "undefined tensor";
      s.tensor = DescOf(v);
      if (t.defined() && !t.is_quantized() && (at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type()))) {
        s.nonfinite = t.numel() - at::isfinite(t).sum().item<int64_t>();
      }
    } else if (v.isDouble()) {
      s.desc = "float " + Short(v);
      s.nonfinite = std::isfinite(v.toDouble()) ? 0 : 1;
    } else if (v.isObject()) {
      s.desc = "object " + KindOf(v);
    } else {
      s.desc = KindOf(v) + " " + Short(v);
    }
    out.push_back(std::move(s));
  };
  walk(value, path);
  return out;
}

}  // namespace tsctl
