#include "torch_child_codec.h"

#include <optional>
#include <string_view>
#include <type_traits>

#include "../text/json_util.h"
#include "torch_child_sandbox.h"

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
namespace {

// How many members an aggregate has: the most initializers T{...} takes
// (each `AnyField` converts to any member type; a base class counts as one).
// A codec list shorter than this forgot a field, which would cross as its
// default without a word: a compile error instead (TSCTL_CODEC).
struct AnyField {
  template <typename T>
  operator T() const;
};
template <typename T, typename... Fields>
constexpr size_t FieldCount() {
  if constexpr (requires { T{Fields{}..., AnyField{}}; }) {
    return FieldCount<T, Fields..., AnyField>();
  } else {
    return sizeof...(Fields);
  }
}
// The names in a list's text (its commas, plus one; none in "").
constexpr size_t ListedFields(std::string_view names) {
  if (names.empty()) return 0;
  size_t n = 1;
  for (char c : names) n += c == ',';
  return n;
}

}  // namespace

// Each struct's fields, once: NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE makes the
// writer and the reader from the same list, and its reader throws on a
// missing field; TSCTL_CODEC also holds the list to the struct's members, so
// a field added to the struct and not here does not compile. `bases`: the
// base classes whose fields their own codec carries (RunSpec's); `kept`: the
// fields that stay in this process, by name (what the parent decides or
// fills in after the child answered, a std::function), "" for none. A struct
// with a constructor (BenchOptions) is no aggregate and cannot be counted.
#define TSCTL_COUNT_FIELDS(Type, bases, kept, ...)                                                 \
  static_assert(!std::is_aggregate_v<Type> ||                                                      \
                    FieldCount<Type>() == (bases) + ListedFields(kept) + ListedFields(#__VA_ARGS__), \
                "the codec of " #Type " does not list each of its fields: add the missing one");
#define TSCTL_CODEC(Type, ...)                          \
  NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Type, __VA_ARGS__) \
  TSCTL_COUNT_FIELDS(Type, 0, "", __VA_ARGS__)
#define TSCTL_CODEC_KEEPING(Type, kept, ...)            \
  NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Type, __VA_ARGS__) \
  TSCTL_COUNT_FIELDS(Type, 0, kept, __VA_ARGS__)
TSCTL_CODEC(ArgSpec, name, value)
TSCTL_CODEC(CandidateTry, flags, outcome)
TSCTL_CODEC(TensorDesc, dtype, shape, device)
TSCTL_CODEC(OutputSummary, name, desc, nonfinite, tensor)
TSCTL_CODEC(ReferenceLeaf, name, pass, compared, is_tensor, rtol, atol, max_abs, mean_abs, max_rel,
            mean_rel, has_min_tolerance, min_atol, min_rtol, error)
TSCTL_CODEC(IntermediatesResult, compared, matched_by, partial, values, first_divergence, node, node_b,
            detail, note)
TSCTL_CODEC(StateWrite, attribute, op, where, note)
TSCTL_CODEC(StateChange, attribute, kind, before, after, after_call, note)
TSCTL_CODEC(ModelCheckResult, loaded, load_ms, load_error, methods, ops, unsafe, graph_ops, ops_error, method_found,
            schema, ran, run_skipped, run_error, input_source, inputs_desc, inputs_note, inputs_flags,
            input_args, outputs, deterministic, determinism_note, stateful, stateful_note, state_searched,
            state_writes, state_changes, calls, calls_origin, max_run_diff, candidates_tried,
            candidates, candidates_stop, guess_suspect, inputs_contradict, outputs_saved, inputs_saved, reference_compared, reference_source, reference_error, reference_skipped, reference,
            recorded, mobile_loaded, mobile_error, intermediates)
TSCTL_CODEC(BenchOutput, name, desc, tensor)
TSCTL_CODEC(OpStat, name, shapes, calls, total_ns, self_ns)
TSCTL_CODEC_KEEPING(BenchResult, "saved_outputs, warmup_count, warmup_seconds, iters_count, duration_seconds",
                    path, method, device, inputs, input_tensors, input_source, settings, libtorch_version,
            threads, interop_threads, instances, load_ns, first_ns, warmup_ns, settled_after, runtime,
            latencies_ns, wall_ns, peak_rss_bytes, cuda_peak_bytes, ops, profiled_ns,
            profile_sample, api_usage, warnings, device_time, aoti, outputs)
TSCTL_CODEC(CheckReport, inputs, matched, max_abs, error)
TSCTL_CODEC_KEEPING(MakeResult, "saved_outputs", output, bytes, methods, inputs, checks, diverged, warnings, input_note, format,
            dynamic)
TSCTL_CODEC(MigrateOutputError, name, max_abs, max_rel)
TSCTL_CODEC(MigrateDivergence, compared, node, where, program_node, max_abs, matched, agreed, note)
TSCTL_CODEC(MigrateCheck, inputs, matched, skipped, max_abs, max_rel, error, outputs, divergence)
TSCTL_CODEC(MigrateTiming, step, seconds)
TSCTL_CODEC(MigrateBlocker, kind, node, where, advice)
TSCTL_CODEC(MigrateBenchForm, form, latencies_ns, median_ns, ratio, error)
TSCTL_CODEC(MigrateResult, path, output, stage, verified, written, error, blockers, checks, dynamic,
            input_source, inputs, converter, torch_version, sha256, warnings, timings, seconds,
            bench, bench_warmup)

// The requests (the parent's side of the door, read by a child of the
// LibTorch server): the same one-list rule. A std::function (progress)
// does not cross; BenchRequest says whether one was set.
TSCTL_CODEC(InputSpec, shape, dtype, channels_last, fill, low, high, value)
TSCTL_CODEC(ValueRange, name, low, high)
TSCTL_CODEC(Pt2RunSpec, kind, model, input_names, input_types, guess, guess_note, guess_missing,
            sample_inputs_path)
TSCTL_CODEC(ExecutionSettings, optimized_execution, inference_mode, jit_profiling, jit_executor,
            tensor_fuser, freeze, optimize_for_inference, cache_cleaning)
TSCTL_CODEC_KEEPING(GraphOptions, "timeout_seconds, allow_load_hooks", path, load_path, method, inlined, frozen, max_nodes, format, load_libraries)
// RunSpec's fields, once; the options built on it write them beside their own.
TSCTL_CODEC(RunSpec, method, inputs, args, load_inputs_path, data_loader, infer_inputs, seed,
            value_ranges, device, quantized_engine, load_libraries, timeout_seconds,
            memory_limit_bytes, max_output_bytes)
// A struct built on another (RunSpec, MakeSpec): the base's fields by its
// own codec, then the struct's.
#define TSCTL_DEFINE_ON_BASE(Type, Base, kept, ...)                                           \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {                \
    to_json(nlohmann_json_j, static_cast<const Base&>(nlohmann_json_t));                      \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                  \
  }                                                                                           \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {              \
    from_json(nlohmann_json_j, static_cast<Base&>(nlohmann_json_t));                          \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM, __VA_ARGS__))                \
  }                                                                                           \
  TSCTL_COUNT_FIELDS(Type, 1, kept, __VA_ARGS__)
#define TSCTL_DEFINE_ON_RUN_SPEC(Type, kept, ...) TSCTL_DEFINE_ON_BASE(Type, RunSpec, kept, __VA_ARGS__)
TSCTL_DEFINE_ON_RUN_SPEC(MakeSpec, "", check_inputs, freeze, rtol, atol, output)
TSCTL_DEFINE_ON_RUN_SPEC(ModelCheckOptions, "progress", path, load_path, run, check_determinism, reference_path, reference_label,
                         reference_from_archive, check_mobile, rtol, atol, record_reference_path, record_intermediates,
                         compare_intermediates, input_source, infer_budget_seconds, max_candidates,
                         ranges_for_any_method, skip_candidates, save_outputs_path, save_inputs_path, pt2, calls, calls_origin)
TSCTL_DEFINE_ON_RUN_SPEC(BenchOptions, "allow_load_hooks, progress", path, load_path, input_source, warmup, warmup_seconds, iters, duration_seconds, threads,
                         interop_threads, instances, share_weights, settings, percentiles, profile, profile_shapes,
                         profile_sample, trace_path, log_api_usage, model_id, save_outputs_path, pt2)
TSCTL_DEFINE_ON_BASE(TraceOptions, MakeSpec, "allow_load_hooks", path, load_path, save_outputs_path)
TSCTL_DEFINE_ON_BASE(ScriptOptions, MakeSpec, "", source, source_name, class_name)
TSCTL_DEFINE_ON_BASE(PythonRequest, MakeSpec, "", file, name, mode, aoti, dynamic_batch, strict, keep_unverified, bench_iters,
                     compare_intermediates)
TSCTL_CODEC(GraphRequest, options)
TSCTL_CODEC(CompiledCodeRequest, path, method, load_libraries)
TSCTL_CODEC(CheckRequest, options)
TSCTL_CODEC(TraceRequest, options)
TSCTL_CODEC(ScriptRequest, options)
TSCTL_CODEC(DataLoaderRequest, file, name)
TSCTL_CODEC(PythonMakeRequest, request)
TSCTL_CODEC(PythonMigrateRequest, request)
TSCTL_CODEC_KEEPING(ChildLimits, "max_output_bytes", timeout_seconds, memory_bytes, threads)
TSCTL_CODEC(ProgressEvent, kind, text, done, total, seconds)
TSCTL_CODEC(Pt2Support, runs_aoti, program_unavailable)
TSCTL_CODEC(BuildInfo, libtorch_version, cuda_compiled, cuda_available, cuda_devices, cuda_runtime, cuda_note,
            library_path, cxx_standard, min_file_format, max_file_format, pt2, registry)
TSCTL_CODEC(RequestFiles, reads, writes, libraries, profile, cuda)

// A validate --jobs worker's report: each check's seconds and the
// archive's travel too (JUnit's time attributes come from them).
void to_json(nlohmann::json& j, const CheckResult& c) {
  j = {{"id", c.id},
       {"status", static_cast<int>(c.status)},
       {"message", c.message},
       {"seconds", c.seconds},
       {"model_ran", c.model_ran}};
}
void from_json(const nlohmann::json& j, CheckResult& c) {
  const int status = j.at("status").get<int>();
  if (status < static_cast<int>(CheckStatus::kPass) || status > static_cast<int>(CheckStatus::kSkip)) {
    throw Error(ErrorKind::kIo, "a validate worker's report has an unknown check status");
  }
  c = CheckResult(j.at("id").get<std::string>(), static_cast<CheckStatus>(status), j.at("message").get<std::string>());
  c.seconds = j.at("seconds").get<double>();
  c.model_ran = j.at("model_ran").get<bool>();
}
void to_json(nlohmann::json& j, const ArchiveReport& r) {
  j = {{"path", r.path}, {"checks", r.checks}, {"schema", r.schema},
       {"ops", r.ops},   {"details", Json(r.details)}, {"seconds", r.seconds}, {"not_run", r.not_run},
       {"not_run_check", r.not_run_check}};
}
void from_json(const nlohmann::json& j, ArchiveReport& r) {
  j.at("path").get_to(r.path);
  j.at("checks").get_to(r.checks);
  j.at("schema").get_to(r.schema);
  j.at("ops").get_to(r.ops);
  Json(r.details) = j.at("details");
  j.at("seconds").get_to(r.seconds);
  j.at("not_run").get_to(r.not_run);
  j.at("not_run_check").get_to(r.not_run_check);
}

TSCTL_CODEC(BuildInfoRequest, registry)

void to_json(nlohmann::json& j, const BenchRequest& r) {
  j = {{"options", r.options}, {"progress", static_cast<bool>(r.options.progress)}};
}
void from_json(const nlohmann::json& j, BenchRequest& r) {
  j.at("options").get_to(r.options);
  if (j.at("progress").get<bool>()) r.options.progress = [](const ProgressEvent&) {};
}

namespace {

using nlohmann::json;

template <typename Variant, size_t I = 0>
Variant ValueOfType(size_t type, const json& j) {
  if constexpr (I < std::variant_size_v<Variant>) {
    if (type == I) return j.get<std::variant_alternative_t<I, Variant>>();
    return ValueOfType<Variant, I + 1>(type, j);
  } else {
    throw Error(ErrorKind::kIo, "a LibTorch child got or gave a value of an unknown type");
  }
}

std::string Cbor(const json& j) {
  std::vector<std::uint8_t> bytes = json::to_cbor(j);
  return std::string(bytes.begin(), bytes.end());
}

// The document `bytes` holds, if it is one of this codec's version; else
// tsctl::Error (kIo) `unknown`.
json Versioned(const std::string& bytes, const char* unknown) {
  json j = json::from_cbor(bytes, true, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("codec") || j["codec"] != kChildCodecVersion) {
    throw Error(ErrorKind::kIo, unknown);
  }
  return j;
}

}  // namespace

std::string EncodeChildValue(const ChildValue& value) {
  json j = {{"codec", kChildCodecVersion}, {"type", value.index()}};
  std::visit([&](const auto& v) { j["value"] = v; }, value);
  return Cbor(j);
}

std::string EncodeChildError(const Error& error) {
  json j = {{"codec", kChildCodecVersion},
            {"error", {{"kind", static_cast<int>(error.kind())}, {"message", error.what()}, {"detail", error.detail()}}}};
  return Cbor(j);
}

void DecodeChildAnswer(const std::string& bytes, ChildOutcome& out) {
  const json j = Versioned(bytes, "a LibTorch child answered in an unknown format (plugin and tsctl of different versions?)");
  try {
    if (j.contains("error")) {
      const json& e = j.at("error");
      int kind = e.at("kind").get<int>();
      if (kind < 0 || kind > static_cast<int>(ErrorKind::kRefused)) kind = static_cast<int>(ErrorKind::kTorch);
      out.end = ChildEnd::kRaised;
      out.error_kind = static_cast<ErrorKind>(kind);
      out.error = e.at("message").get<std::string>();
      out.error_detail = e.at("detail").get<std::string>();
      return;
    }
    out.value = ValueOfType<ChildValue>(j.at("type").get<size_t>(), j.at("value"));
    out.end = ChildEnd::kAnswered;
  } catch (const json::exception& e) {
    throw Error(ErrorKind::kIo, std::string("a LibTorch child's answer is incomplete: ") + e.what());
  }
}

std::string EncodeChildLaunch(const ChildLaunch& launch) {
  json j = {{"codec", kChildCodecVersion},     {"type", launch.request.index()}, {"files", launch.files},
            {"limits", launch.limits},         {"private_dir", launch.private_dir},
            {"environment", launch.environment}, {"descriptors", launch.descriptors}};
  std::visit([&](const auto& r) { j["request"] = r; }, launch.request);
  return Cbor(j);
}

ChildLaunch DecodeChildLaunch(const std::string& bytes) {
  const json j =
      Versioned(bytes, "the LibTorch server got a request in an unknown format (server and tsctl of different versions?)");
  try {
    ChildLaunch launch;
    launch.request = ValueOfType<ChildRequest>(j.at("type").get<size_t>(), j.at("request"));
    j.at("files").get_to(launch.files);
    j.at("limits").get_to(launch.limits);
    j.at("private_dir").get_to(launch.private_dir);
    j.at("environment").get_to(launch.environment);
    j.at("descriptors").get_to(launch.descriptors);
    return launch;
  } catch (const json::exception& e) {
    throw Error(ErrorKind::kIo, std::string("a LibTorch request is incomplete: ") + e.what());
  }
}

std::string EncodeBuildInfo(const BuildInfo& info) { return Cbor({{"codec", kChildCodecVersion}, {"info", info}}); }

BuildInfo DecodeBuildInfo(const std::string& bytes) {
  constexpr const char* kUnknown = "the LibTorch server answered in an unknown format (server and tsctl of different versions?)";
  const json j = Versioned(bytes, kUnknown);
  try {
    return j.at("info").get<BuildInfo>();
  } catch (const json::exception&) {
    throw Error(ErrorKind::kIo, kUnknown);
  }
}

std::string EncodeProgress(const ProgressEvent& event) { return Cbor({{"codec", kChildCodecVersion}, {"event", event}}); }

std::optional<ProgressEvent> DecodeProgress(const std::string& bytes) {
  const json j = json::from_cbor(bytes, true, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("codec") || j["codec"] != kChildCodecVersion) return std::nullopt;
  try {
    return j.at("event").get<ProgressEvent>();
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

nlohmann::json ModelCheckToJson(const ModelCheckResult& result) { return result; }

}  // namespace tsctl
