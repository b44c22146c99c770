#include "torch_child_codec.h"

#include <optional>

namespace nlohmann {

// Unset optionals cross as null.
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& o) {
    if (o) j = *o;
    else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& o) {
    if (j.is_null()) o.reset();
    else o = j.get<T>();
  }
};

}  // namespace nlohmann

namespace tsctl {

// Each struct's fields, once: NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE makes the
// writer and the reader from the same list, and its reader throws on a
// missing field.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ArgSpec, name, value)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CandidateTry, flags, outcome)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OutputSummary, name, desc, nonfinite)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ReferenceLeaf, name, pass, compared, is_tensor, rtol, atol, max_abs, mean_abs, max_rel,
                                   mean_rel, has_min_tolerance, min_atol, min_rtol, error)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(IntermediatesResult, compared, matched_by, partial, values, first_divergence, node, node_b,
                                   detail, note)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ModelCheckResult, loaded, load_ms, load_error, methods, ops, unsafe, ops_error, method_found,
                                   schema, ran, run_skipped, run_error, input_source, inputs_desc, inputs_note, inputs_flags,
                                   input_args, outputs, deterministic, determinism_note, stateful, max_run_diff, candidates_tried,
                                   candidates, candidates_stop, guess_suspect, outputs_saved, reference_compared, reference_source, reference_error, reference,
                                   recorded, mobile_loaded, mobile_error, intermediates)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BenchOutput, name, desc)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OpStat, name, shapes, calls, total_ns, self_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BenchResult, path, method, device, inputs, input_source, settings, libtorch_version,
                                   threads, interop_threads, instances, load_ns, first_ns, warmup_ns, settled_after,
                                   latencies_ns, wall_ns, peak_rss_bytes, cuda_peak_bytes, ops, profiled_ns,
                                   profile_sample, api_usage, warnings, device_time, aoti, outputs)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CheckReport, inputs, matched, max_abs, error)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MakeResult, output, bytes, methods, inputs, checks, diverged, warnings, input_note, format,
                                   dynamic)

namespace {

using nlohmann::json;

template <size_t I = 0>
ChildValue ValueOfType(size_t type, const json& j) {
  if constexpr (I < std::variant_size_v<ChildValue>) {
    if (type == I) return j.get<std::variant_alternative_t<I, ChildValue>>();
    return ValueOfType<I + 1>(type, j);
  } else {
    throw Error(ErrorKind::kIo, "a LibTorch child answered with an unknown type");
  }
}

}  // namespace

std::string EncodeChildValue(const ChildValue& value) {
  json j = {{"codec", kChildCodecVersion}, {"type", value.index()}};
  std::visit([&](const auto& v) { j["value"] = v; }, value);
  std::vector<std::uint8_t> bytes = json::to_cbor(j);
  return std::string(bytes.begin(), bytes.end());
}

std::string EncodeChildError(const Error& error) {
  json j = {{"codec", kChildCodecVersion},
            {"error", {{"kind", static_cast<int>(error.kind())}, {"message", error.what()}, {"detail", error.detail()}}}};
  std::vector<std::uint8_t> bytes = json::to_cbor(j);
  return std::string(bytes.begin(), bytes.end());
}

void DecodeChildAnswer(const std::string& bytes, ChildOutcome& out) {
  json j = json::from_cbor(bytes, true, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("codec") || j["codec"] != kChildCodecVersion) {
    throw Error(ErrorKind::kIo, "a LibTorch child answered in an unknown format (plugin and tsctl of different versions?)");
  }
  try {
    if (j.contains("error")) {
      const json& e = j.at("error");
      int kind = e.at("kind").get<int>();
      if (kind < 0 || kind > static_cast<int>(ErrorKind::kUnavailable)) kind = static_cast<int>(ErrorKind::kTorch);
      out.end = ChildEnd::kRaised;
      out.error_kind = static_cast<ErrorKind>(kind);
      out.error = e.at("message").get<std::string>();
      out.error_detail = e.at("detail").get<std::string>();
      return;
    }
    out.value = ValueOfType(j.at("type").get<size_t>(), j.at("value"));
    out.end = ChildEnd::kAnswered;
  } catch (const json::exception& e) {
    throw Error(ErrorKind::kIo, std::string("a LibTorch child's answer is incomplete: ") + e.what());
  }
}

nlohmann::json ModelCheckToJson(const ModelCheckResult& result) { return result; }

}  // namespace tsctl
