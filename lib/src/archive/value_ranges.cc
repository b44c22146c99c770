// --val-range: the values generated tensors take (Polygraphy's flag), as a
// rewrite of the tensor specs the run is built from, so the pin flags a run
// prints reproduce its values.
#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

#include "tsctl/error.h"
#include "tsctl/inputs.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

using nlohmann::json;

double ParseNumber(const std::string& text, const std::string& whole) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v)) {
    throw Error(ErrorKind::kUsage, "--val-range '" + whole + "': '" + text + "' is not a finite number (expected [NAME:]LOW,HIGH)");
  }
  return v;
}

std::string ShownNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The spec with `range` applied, if it is a randomly filled tensor spec.
std::optional<std::string> Ranged(const std::string& text, const ValueRange& range) {
  InputSpec spec;
  try {
    spec = ParseInputSpec(text);
  } catch (const Error&) {
    return std::nullopt;  // not a spec: a nested list of numbers, a string
  }
  if (spec.fill != InputSpec::Fill::kRandom || spec.dtype == "bool") return std::nullopt;
  if (IsFloatingDtype(spec.dtype)) {
    spec.fill = InputSpec::Fill::kUniform;
    spec.low = range.low;
    spec.high = range.high;
  } else {
    spec.fill = InputSpec::Fill::kRandint;
    spec.low = std::ceil(range.low);
    spec.high = std::floor(range.high) + 1;
    if (spec.high <= spec.low) {
      throw Error(ErrorKind::kUsage, "--val-range " + ShownNumber(range.low) + "," + ShownNumber(range.high) +
                                         " holds no whole number for the " + spec.dtype + " tensor " + text);
    }
  }
  return spec.ToString();
}

// Rewrites every tensor spec in a JSON value (lists, tuples, dicts of them).
void RangeJson(json& j, const ValueRange& range) {
  if (j.is_string()) {
    if (auto r = Ranged(j.get<std::string>(), range)) j = *r;
  } else if (j.is_structured()) {
    for (json& e : j) RangeJson(e, range);
  }
}

std::string RangeValue(const std::string& text, const ValueRange& range) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return Ranged(text, range).value_or(text);  // bare text: one spec
  RangeJson(j, range);
  return j.is_string() ? j.get<std::string>() : j.dump();
}

}  // namespace

std::vector<ValueRange> ParseValueRanges(const std::vector<std::string>& texts) {
  std::vector<ValueRange> out;
  std::set<std::string> names;
  for (const std::string& text : texts) {
    ValueRange r;
    std::string body = text;
    const size_t colon = text.find(':');
    if (colon != std::string::npos) {
      r.name = text.substr(0, colon);
      body = text.substr(colon + 1);
      if (!IsIdentifier(r.name)) {
        throw Error(ErrorKind::kUsage, "--val-range '" + text + "': '" + r.name + "' is not an argument name (expected [NAME:]LOW,HIGH)");
      }
    }
    if (body.size() >= 2 && body.front() == '[' && body.back() == ']') body = body.substr(1, body.size() - 2);
    const size_t comma = body.find(',');
    if (comma == std::string::npos) throw Error(ErrorKind::kUsage, "--val-range '" + text + "': expected [NAME:]LOW,HIGH");
    r.low = ParseNumber(body.substr(0, comma), text);
    r.high = ParseNumber(body.substr(comma + 1), text);
    if (r.high < r.low) throw Error(ErrorKind::kUsage, "--val-range '" + text + "': LOW is above HIGH");
    if (!names.insert(r.name).second) {
      throw Error(ErrorKind::kUsage, "--val-range given twice for " + (r.name.empty() ? std::string("every argument") : "'" + r.name + "'"));
    }
    out.push_back(r);
  }
  return out;
}

std::vector<ArgSpec> ApplyValueRanges(const std::vector<ArgSpec>& args, const std::vector<FormalArg>& formals,
                                      const std::vector<ValueRange>& ranges) {
  if (ranges.empty()) return args;
  const ValueRange* every = nullptr;
  for (const ValueRange& r : ranges) {
    if (r.name.empty()) {
      every = &r;
      continue;
    }
    bool known = false;
    std::string list;
    for (const FormalArg& f : formals) {
      known |= f.name == r.name;
      list += (list.empty() ? "" : ", ") + f.name;
    }
    if (!known) {
      throw Error(ErrorKind::kUsage, "--val-range names no argument '" + r.name + "' (the method takes " +
                                         (list.empty() ? std::string("none") : list) + ")");
    }
  }
  // Named arguments take their slots; positional ones the free slots in order.
  std::vector<bool> taken(formals.size(), false);
  for (const ArgSpec& a : args) {
    for (size_t k = 0; k < formals.size(); ++k) {
      if (!a.name.empty() && formals[k].name == a.name) taken[k] = true;
    }
  }
  std::vector<ArgSpec> out = args;
  size_t next = 0;
  for (ArgSpec& a : out) {
    const FormalArg* formal = nullptr;
    if (a.name.empty()) {
      while (next < formals.size() && taken[next]) ++next;
      if (next < formals.size()) formal = &formals[next++];
    } else {
      for (const FormalArg& f : formals) {
        if (f.name == a.name) formal = &f;
      }
    }
    if (!formal || !formal->holds_tensors) continue;  // BuildArguments says what does not bind
    const ValueRange* range = every;
    for (const ValueRange& r : ranges) {
      if (r.name == formal->name) range = &r;
    }
    if (range) a.value = RangeValue(a.value, *range);
  }
  return out;
}

}  // namespace tsctl
