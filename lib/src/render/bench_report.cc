// Statistics, advice and rendering for `tsctl bench`. No LibTorch here.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "../text/json_util.h"
#include "render_json.h"
#include "../text/units.h"
#include "tensor_type.h"
#include "tsctl/bench.h"
#include "tsctl/escape.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

std::string PercentName(double p) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "p%g", p);
  return buf;
}

}  // namespace

std::string ExecutionSettings::Describe() const {
  std::string s = "optimized-execution " + OnOff(optimized_execution) + ", inference-mode " + OnOff(inference_mode) +
                  ", jit-profiling " + OptOnOff(jit_profiling) + ", jit-executor " + OptOnOff(jit_executor) +
                  ", tensor-fuser " + OptOnOff(tensor_fuser);
  if (freeze) s += ", freeze";
  if (optimize_for_inference) s += ", optimize-for-inference";
  if (cache_cleaning) s += ", cache-cleaning";
  return s;
}

int SettledAfter(const std::vector<uint64_t>& warmup_ns, double timed_median) {
  // Settled at i: call i and, from i on, every rolling median of 5 calls lie
  // within 15% of the timed median (single outliers do not count).
  if (timed_median <= 0 || warmup_ns.empty()) return -1;
  const size_t n = warmup_ns.size(), window = 5;
  auto close = [&](size_t j) {
    std::vector<uint64_t> w(warmup_ns.begin() + static_cast<std::ptrdiff_t>(j),
                            warmup_ns.begin() + static_cast<std::ptrdiff_t>(std::min(j + window, n)));
    std::sort(w.begin(), w.end());
    return std::abs(static_cast<double>(w[(w.size() - 1) / 2]) - timed_median) <= 0.15 * timed_median;
  };
  // Scan backwards while every window from j on is close; the answer is the
  // first such j whose own call is close too.
  int settled = -1;
  for (size_t j = n; j-- > 0;) {
    if (!close(j)) break;
    if (std::abs(static_cast<double>(warmup_ns[j]) - timed_median) <= 0.15 * timed_median) settled = static_cast<int>(j);
  }
  return settled;
}

double TimedStartOff(const std::vector<uint64_t>& latencies_ns, double timed_median) {
  // The median of the first tenth (at least 5) of the timed calls, against
  // the timed median; -1 with under 10 calls (too few to tell).
  const size_t n = latencies_ns.size(), k = std::max<size_t>(5, n / 10);
  if (n < 10 || timed_median <= 0) return -1;
  std::vector<uint64_t> first(latencies_ns.begin(), latencies_ns.begin() + static_cast<std::ptrdiff_t>(k));
  std::sort(first.begin(), first.end());
  return std::abs(static_cast<double>(first[(k - 1) / 2]) - timed_median) / timed_median;
}

// The spread of the middle half of the timed calls, (p75 - p25) / median, in
// percent; 0 with fewer than 8 calls. Robust where the coefficient of
// variation is not: on a shared 2-core machine a steady 1 ms loop had a CV
// of 30-65% from a few calls 5x the median, and an IQR of 5-9% of it.
double MiddleSpread(const std::vector<uint64_t>& latencies_ns) {
  if (latencies_ns.size() < 8) return 0;
  std::vector<uint64_t> v = latencies_ns;
  std::sort(v.begin(), v.end());
  const double p25 = static_cast<double>(v[v.size() / 4]), p75 = static_cast<double>(v[v.size() * 3 / 4]);
  const double median = static_cast<double>(v[v.size() / 2]);
  return median > 0 ? (p75 - p25) / median * 100 : 0;
}

// Above the 5-9% measured for a steady loop (scripts/bench_noise.py prints it).
inline constexpr double kUnstableSpreadPercent = 10;

std::vector<std::string> BenchWarnings(const BenchResult& r, const Stats& s) {
  std::vector<std::string> w = r.warnings;
  (void)s;
  if (const double spread = MiddleSpread(r.latencies_ns); spread > kUnstableSpreadPercent) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "unstable timings: the middle half of the calls spans %.0f%% of the median (a steady loop: under "
                  "10%%); try a longer --duration%s or a quieter machine",
                  spread, r.threads > 1 ? ", --threads 1" : "");
    w.push_back(buf);
  }
  int settled = SettledAfter(r.warmup_ns, s.median);
  // The flag that bounded the warm-up, with four times its value.
  std::string more = "--warmup (e.g. --warmup " + std::to_string(std::max<size_t>(20, r.warmup_ns.size() * 4)) + ")";
  if (r.warmup_count < 0 && r.warmup_seconds > 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "--warmup-time (e.g. --warmup-time %g)", std::max(1.0, r.warmup_seconds * 4));
    more = buf;
  }
  // What the warm-up protects is the timed calls: with enough of them, its
  // advice stands only if their start still differs from their median.
  const double start_off = TimedStartOff(r.latencies_ns, s.median);
  if (!r.warmup_ns.empty() && start_off >= 0 && start_off <= 0.15) {
    // The timed phase started at its median: a warm-up that never came
    // within 15% of it (calls timed one by one on a quick model) is no finding.
  } else if (!r.warmup_ns.empty() && start_off > 0.15) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "the first %zu timed calls are %.0f%% off the timed median",
                  std::max<size_t>(5, r.latencies_ns.size() / 10), start_off * 100);
    w.push_back(std::string("warm-up not settled: ") + buf + "; raise " + more);
  } else if (!r.warmup_ns.empty() && settled < 0) {
    w.push_back("warm-up not settled: the last warm-up calls still differ from the timed median by over 15%; raise " + more);
  } else if (!r.warmup_ns.empty() && settled + 3 > static_cast<int>(r.warmup_ns.size())) {
    // Within 15% from call `settled` on, but too few calls after it to tell a
    // settled curve from a passing dip.
    const size_t confirm = r.warmup_ns.size() - static_cast<size_t>(settled);
    w.push_back("warm-up settled late: only the last " + std::to_string(confirm) + " of " + std::to_string(r.warmup_ns.size()) +
                " warm-up calls are within 15% of the timed median (3 confirm it); raise " + more);
  }
  if (r.iters_count <= 0 && r.duration_seconds > 0 && r.latencies_ns.size() < 10) {
    w.push_back("only " + std::to_string(r.latencies_ns.size()) + " timed calls in --duration: percentiles are rough (a longer "
                "--duration, or --iters N, gives more)");
  }
  if (r.warmup_ns.empty()) {
    w.push_back(std::string("no warm-up: the first calls of ") + (r.aoti || !r.runtime.empty() ? "a model" : "a TorchScript model") +
                " are slow; the timings include them (use --warmup N)");
  }
  if (r.first_ns > 0 && s.median > 0 && static_cast<double>(r.first_ns) > 10 * s.median) {
    // --optimized-execution is a TorchScript executor setting: not offered
    // for a package or another runtime's program.
    const bool torchscript = !r.aoti && r.runtime.empty();
    char buf[200];
    std::snprintf(buf, sizeof buf, "first call took %.0fx the median: %s%s", static_cast<double>(r.first_ns) / s.median,
                  r.runtime.empty() ? "serve warm (Triton: model_warmup)" : "serve warm (call it once after loading)",
                  torchscript ? " or try --optimized-execution off" : "");
    w.push_back(buf);
  }
  return w;
}

namespace {

// How many calls each phase made, and what bounded it: a count given, or a time.
nlohmann::json RunsJson(const BenchResult& r) {
  auto bound = [](int count, double seconds) -> nlohmann::json {
    if (count >= 0 && seconds <= 0) return {{"by", "count"}, {"calls", count}, {"seconds", nullptr}};
    return {{"by", "time"}, {"calls", nullptr}, {"seconds", seconds}};
  };
  return {{"warmup_calls", r.warmup_ns.size()},
          {"timed_calls", r.latencies_ns.size()},
          {"warmup", bound(r.warmup_count, r.warmup_seconds)},
          {"timed", bound(r.iters_count > 0 ? r.iters_count : -1, r.duration_seconds)}};
}

// "12 warm-up calls (--warmup-time 0.2 s), 340 timed calls (--duration 3 s)".
std::string RunsText(const BenchResult& r) {
  auto phase = [](size_t n, const char* what, const char* count_flag, const char* time_flag, int count, double seconds) {
    char buf[96];
    if (count >= 0 && seconds <= 0) std::snprintf(buf, sizeof buf, "%zu %s call%s (%s %d)", n, what, n == 1 ? "" : "s", count_flag, count);
    else std::snprintf(buf, sizeof buf, "%zu %s call%s (%s %g s)", n, what, n == 1 ? "" : "s", time_flag, seconds);
    return std::string(buf);
  };
  return phase(r.warmup_ns.size(), "warm-up", "--warmup", "--warmup-time", r.warmup_count, r.warmup_seconds) + ", " +
         phase(r.latencies_ns.size(), "timed", "--iters", "--duration", r.iters_count > 0 ? r.iters_count : -1, r.duration_seconds);
}

}  // namespace

nlohmann::json ToJson(const BenchResult& r, const std::vector<double>& percentiles) {
  Stats s = ComputeStats(r, percentiles);
  nlohmann::json j;
  j["schema_version"] = kBenchSchemaVersion;
  j["path"] = r.path;
  j["method"] = r.method;
  j["device"] = r.device;
  j["sandbox"] = SandboxJson();
  j["inputs"] = r.inputs;
  // Beside each "x=1x3x8x8:float32": its name, and the dtype and shape of
  // the tensor the child made of it (null when it made none).
  j["input_tensors"] = nlohmann::json::array();
  for (size_t k = 0; k < r.inputs.size(); ++k) {
    const std::string& in = r.inputs[k];
    const size_t eq = in.find('=');
    bool named = eq != std::string::npos && eq > 0;
    for (size_t i = 0; named && i < eq; ++i) named = std::isalnum(static_cast<unsigned char>(in[i])) || in[i] == '_';
    nlohmann::json t = {{"name", named ? in.substr(0, eq) : ""}};
    AddTensorDesc(t, k < r.input_tensors.size() ? r.input_tensors[k] : std::nullopt);
    j["input_tensors"].push_back(std::move(t));
  }
  // The last call's outputs, leaf by leaf, typed as the inputs are.
  j["outputs"] = nlohmann::json::array();
  for (const BenchOutput& o : r.outputs) {
    nlohmann::json t = {{"name", o.name}, {"desc", o.desc}};
    AddTensorDesc(t, o.tensor);
    j["outputs"].push_back(std::move(t));
  }
  j["input_source"] = r.input_source;
  if (!r.saved_outputs.empty()) j["saved_outputs"] = r.saved_outputs;
  j["settings"] = r.settings;
  j["libtorch_version"] = r.libtorch_version;
  if (!r.runtime.empty()) j["runtime"] = r.runtime;
  j["threads"] = r.threads;
  j["interop_threads"] = r.interop_threads;
  j["instances"] = r.instances;
  j["load_ns"] = r.load_ns;
  j["first_ns"] = r.first_ns;
  j["warmup_ns"] = r.warmup_ns;
  j["settled_after"] = SettledAfter(r.warmup_ns, s.median);
  j["iterations"] = r.latencies_ns.size();
  j["runs"] = RunsJson(r);
  j["wall_ns"] = r.wall_ns;
  j["latency_ns"] = {{"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"median", s.median}, {"stddev", s.stddev}};
  for (const auto& [p, v] : s.percentiles) j["latency_ns"][PercentName(p)] = v;
  j["throughput_per_s"] = s.throughput;
  j["latencies_ns"] = r.latencies_ns;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  j["cuda_peak_bytes"] = r.cuda_peak_bytes >= 0 ? nlohmann::json(r.cuda_peak_bytes) : nlohmann::json(nullptr);
  j["warnings"] = BenchWarnings(r, s);
  if (!r.ops.empty()) {
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& o : r.ops) {
      nlohmann::json oj = {{"name", o.name}, {"calls", o.calls}, {"total_ns", o.total_ns}, {"self_ns", o.self_ns},
                           {"mean_ns", o.calls ? static_cast<double>(o.total_ns) / static_cast<double>(o.calls) : 0.0},
                           {"share", r.profiled_ns ? static_cast<double>(o.self_ns) / static_cast<double>(r.profiled_ns) : 0.0}};
      if (!o.shapes.empty()) oj["shapes"] = o.shapes;
      ops.push_back(oj);
    }
    j["profile"] = {{"sample", r.profile_sample}, {"operator_ns", r.profiled_ns}, {"device_time", r.device_time}, {"ops", ops}};
  }
  if (!r.api_usage.empty()) {
    nlohmann::json u = nlohmann::json::object();
    for (const auto& [k, v] : r.api_usage) u[k] = v;
    j["api_usage"] = u;
  }
  return j;
}

// The per-operator profile, by self time: the first 40 operators.
void PrintOperators(const BenchResult& r, std::ostream& out) {
  if (r.ops.empty()) return;
  char head[160];
  if (r.profile_sample < 1) {
    std::snprintf(head, sizeof head, "\noperators (sampled: %g of calls; counts not scaled, self times approximate)\n", r.profile_sample);
  } else {
    std::snprintf(head, sizeof head, "\noperators (every call; by self time)\n");
  }
  out << head;
  bool shapes = false;
  for (const auto& o : r.ops) shapes |= !o.shapes.empty();
  std::snprintf(head, sizeof head, "  %-36s %9s %12s %12s %12s %7s%s\n", "operator", "calls", "total", "self", "mean", "share",
                shapes ? "  input shapes" : "");
  out << head;
  size_t shown = 0;
  for (const auto& o : r.ops) {
    if (++shown > 40) {
      out << "  ... " << (r.ops.size() - 40) << " more (see --json)\n";
      break;
    }
    char line[512];
    // Names come from the model too (record_function scopes): escaped.
    std::string name = EscapeText(o.name);
    if (name.size() > 36) name = name.substr(0, Utf8CutPoint(name, 33)) + "...";
    std::snprintf(line, sizeof line, "  %-36s %9llu %12s %12s %12s %6.1f%%", name.c_str(),
                  static_cast<unsigned long long>(o.calls), Ms(static_cast<double>(o.total_ns)).c_str(),
                  Ms(static_cast<double>(o.self_ns)).c_str(),
                  Ms(o.calls ? static_cast<double>(o.total_ns) / static_cast<double>(o.calls) : 0).c_str(),
                  r.profiled_ns ? 100.0 * static_cast<double>(o.self_ns) / static_cast<double>(r.profiled_ns) : 0.0);
    out << line << (o.shapes.empty() ? "" : "  " + EscapeText(o.shapes)) << '\n';
  }
}

void RenderText(const BenchResult& r, const std::vector<double>& percentiles, std::ostream& out) {
  Stats s = ComputeStats(r, percentiles);
  out << "model       " << EscapeText(r.path) << " (" << EscapeText(r.method) << ")\n";
  std::string in;
  for (const auto& i : r.inputs) in += (in.empty() ? "" : ", ") + EscapeText(i);
  out << "inputs      " << (in.empty() ? "(none)" : in) << (r.input_source.empty() ? "" : "  from " + EscapeText(r.input_source)) << '\n';
  if (r.runtime.empty()) {
    out << "device      " << r.device << ", " << r.threads << " intra-op / " << r.interop_threads << " inter-op threads, "
        << r.instances << (r.instances == 1 ? " instance" : " instances") << ", LibTorch " << r.libtorch_version << '\n';
  } else {
    out << "device      " << r.device << ", "
        << (r.threads > 0 ? std::to_string(r.threads) + (r.threads == 1 ? " threadpool thread" : " threadpool threads") : std::string("its threadpool's default threads")) << ", "
        << r.instances
        << (r.instances == 1 ? " instance" : " instances") << ", " << EscapeText(r.runtime) << '\n';
  }
  out << "settings    " << r.settings << '\n';
  out << "runs        " << RunsText(r) << '\n';
  if (!r.saved_outputs.empty()) out << "outputs     written to " << EscapeText(r.saved_outputs) << '\n';
  out << "load        " << Ms(static_cast<double>(r.load_ns)) << '\n';
  out << "first call  " << Ms(static_cast<double>(r.first_ns)) << '\n';
  if (!r.warmup_ns.empty()) {
    out << "warm-up     ";
    size_t shown = std::min<size_t>(r.warmup_ns.size(), 10);
    for (size_t i = 0; i < shown; ++i) out << (i ? ", " : "") << Ms(static_cast<double>(r.warmup_ns[i]));
    if (r.warmup_ns.size() > shown) out << ", ... (" << r.warmup_ns.size() << " calls)";
    out << '\n';
    int settled = SettledAfter(r.warmup_ns, s.median);
    out << "settled     " << (settled < 0 ? std::string("not within the warm-up") : "after " + std::to_string(settled) + " warm-up calls") << '\n';
  }
  out << "\nlatency over " << r.latencies_ns.size() << " calls\n";
  out << "  min     " << Ms(static_cast<double>(s.min)) << '\n';
  out << "  mean    " << Ms(s.mean) << '\n';
  out << "  median  " << Ms(s.median) << '\n';
  for (const auto& [p, v] : s.percentiles) {
    if (p == 50) continue;  // the median above
    std::string name = PercentName(p);
    out << "  " << name << std::string(std::max<size_t>(1, 8 - name.size()), ' ') << Ms(v) << '\n';
  }
  out << "  max     " << Ms(static_cast<double>(s.max)) << '\n';
  out << "  stddev  " << Ms(s.stddev) << '\n';
  char tp[64];
  std::snprintf(tp, sizeof tp, "%.1f", s.throughput);
  out << "throughput  " << tp << " calls/s\n";
  out << "peak memory " << HumanBytes(r.peak_rss_bytes) << " resident";
  if (r.cuda_peak_bytes >= 0) out << ", " << HumanBytes(static_cast<uint64_t>(r.cuda_peak_bytes)) << " CUDA";
  out << '\n';
  PrintOperators(r, out);
  if (!r.api_usage.empty()) {
    // LibTorch logs most events with C10_LOG_API_USAGE_ONCE: a count is how
    // often the logger was called, not how often the API was used.
    out << "\nAPI usage events (times LibTorch logged each; most are logged once per process, so these are not call counts)\n";
    for (const auto& [k, v] : r.api_usage) out << "  " << EscapeText(k) << "  " << v << '\n';
  }
  auto warnings = BenchWarnings(r, s);
  if (!warnings.empty()) {
    out << "\nwarnings\n";
    for (const auto& w : warnings) out << "  " << EscapeText(w) << '\n';
  }
}

std::string RenderJson(const BenchResult& r, const std::vector<double>& percentiles) { return DumpJson(ToJson(r, percentiles)); }

}  // namespace tsctl
