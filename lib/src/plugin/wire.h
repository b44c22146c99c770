// Results that cross the pipe from an isolated child (see child.h). Each
// struct's fields are listed once, in one macro that makes both the writer
// and the reader, so the two cannot disagree; the reader throws on a missing
// or mistyped field instead of defaulting. Bump kWireVersion when a field
// changes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tsctl/bench.h"
#include "tsctl/error.h"
#include "tsctl/torch_backend.h"

namespace tsctl {

inline constexpr int kWireVersion = 1;

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OpStat, name, shapes, calls, total_ns, self_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BenchResult, path, method, device, inputs, input_source, settings, libtorch_version,
                                   threads, interop_threads, instances, load_ns, first_ns, warmup_ns, settled_after,
                                   latencies_ns, wall_ns, peak_rss_bytes, cuda_peak_bytes, ops, profiled_ns,
                                   profile_sample, api_usage, warnings, device_time)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CheckReport, inputs, matched, max_abs, error)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MakeResult, output, bytes, methods, inputs, checks, diverged, warnings, input_note)

// A child's answer: its value, or the tsctl::Error it threw (kind kept).
template <typename T>
std::string EncodeValue(const T& value) {
  return nlohmann::json{{"wire", kWireVersion}, {"value", value}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

inline std::string EncodeError(const Error& e) {
  nlohmann::json j = {{"wire", kWireVersion},
                      {"error", {{"kind", static_cast<int>(e.kind())}, {"message", e.what()}, {"detail", e.detail()}}}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Returns the value, or rethrows the child's error. Throws tsctl::Error
// (kIo) if the message is not of this wire version.
template <typename T>
T DecodeAnswer(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("wire") || j["wire"] != kWireVersion) {
    throw Error(ErrorKind::kIo, "an isolated child answered in an unknown format (mixed tsctl versions?)");
  }
  if (j.contains("error")) {
    const auto& e = j.at("error");
    throw Error(static_cast<ErrorKind>(e.at("kind").get<int>()), e.at("message").get<std::string>(),
                e.at("detail").get<std::string>());
  }
  return j.at("value").get<T>();
}

}  // namespace tsctl
