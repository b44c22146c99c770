// Text and JSON of bench --sweep: the settings combinations, which one is
// recommended, and Triton's parameters for it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "../text/json_util.h"
#include "render_json.h"
#include "../text/units.h"
#include "tsctl/bench.h"

namespace tsctl {
namespace {

// An AOTInductor row's settings in words.
std::string AotiDescribe(const SweepRow& r) {
  return std::string(r.settings.inference_mode ? "inference mode" : "no_grad") + ", " +
         (r.threads ? std::to_string(r.threads) + " intra-op threads" : "default intra-op threads");
}

}  // namespace

namespace {

// The columns that vary: TorchScript's executor settings, or an AOTInductor
// row's threads and inference mode.
std::string SettingsColumns(const SweepRow& r) {
  char buf[64];
  const auto& s = r.settings;
  if (r.aoti) {
    std::snprintf(buf, sizeof buf, "%-9s %-9s", r.threads ? std::to_string(r.threads).c_str() : "default",
                  OnOff(s.inference_mode).c_str());
  } else {
    std::snprintf(buf, sizeof buf, "%-9s %-9s %-9s %-9s", OnOff(s.optimized_execution).c_str(), OnOff(s.inference_mode).c_str(),
                  OptOnOff(s.jit_profiling).c_str(), OptOnOff(s.tensor_fuser).c_str());
  }
  return buf;
}

}  // namespace

void RenderSweep(const std::vector<SweepRow>& rows, std::ostream& out) {
  char line[512];
  const bool aoti = !rows.empty() && rows.front().aoti;
  if (aoti) {
    std::snprintf(line, sizeof line, "%-9s %-9s %12s %12s %12s %12s\n", "threads", "inference", "first", "mean", "median", "p90");
  } else {
    std::snprintf(line, sizeof line, "%-9s %-9s %-9s %-9s %12s %12s %12s %12s\n", "optimized", "inference", "profiling",
                  "fuser", "first", "mean", "median", "p90");
  }
  out << line;
  const SweepChoice choice = ChooseSweep(rows);
  const SweepRow* best = choice.fastest;
  for (const auto& r : rows) {
    if (!r.ok) {
      std::snprintf(line, sizeof line, "%s  failed: %s\n", SettingsColumns(r).c_str(), r.error.c_str());
    } else {
      std::snprintf(line, sizeof line, "%s %12s %12s %12s %12s%s\n", SettingsColumns(r).c_str(),
                    Ms(static_cast<double>(r.first_ns)).c_str(), Ms(r.mean_ns).c_str(), Ms(r.median_ns).c_str(),
                    Ms(r.p90_ns).c_str(), &r == best ? "  <- fastest" : (&r == choice.defaults ? "  <- defaults" : ""));
    }
    out << line;
  }
  if (!choice.recommended) return;
  out << "\n" << choice.reason << '\n';
  if (choice.recommended == choice.defaults) {
    out << "Triton config.pbtxt: no parameters needed (the defaults)\n";
  } else {
    out << "Triton config.pbtxt for the recommended settings:\n" << TritonParameters(*choice.recommended);
  }
}

nlohmann::json SweepJson(const std::vector<SweepRow>& rows) {
  nlohmann::json j;
  j["schema_version"] = kBenchSchemaVersion;
  j["rows"] = nlohmann::json::array();
  const SweepChoice choice = ChooseSweep(rows);
  const SweepRow* best = choice.fastest;
  for (const auto& r : rows) {
    nlohmann::json row = {{"settings", r.aoti ? AotiDescribe(r) : r.settings.Describe()},
                          {"ok", r.ok},
                          {"defaults", IsDefaultSweepRow(r)}};
    if (r.aoti) row["threads"] = r.threads;
    if (r.ok) {
      row["first_ns"] = r.first_ns;
      row["mean_ns"] = r.mean_ns;
      row["median_ns"] = r.median_ns;
      row["p90_ns"] = r.p90_ns;
      row["stddev_ns"] = r.stddev_ns;
      row["iterations"] = r.iterations;
    } else {
      row["error"] = r.error;
    }
    j["rows"].push_back(row);
  }
  auto describe = [](const SweepRow& r) { return r.aoti ? AotiDescribe(r) : r.settings.Describe(); };
  j["fastest"] = best ? nlohmann::json(describe(*best)) : nlohmann::json(nullptr);
  j["recommended"] = choice.recommended ? nlohmann::json(describe(*choice.recommended)) : nlohmann::json(nullptr);
  j["decision"] = choice.reason;
  // The parameters to put in config.pbtxt: empty when the defaults are kept.
  const std::string parameters = !choice.recommended || choice.recommended == choice.defaults
                                     ? std::string()
                                     : TritonParameters(*choice.recommended);
  j["triton_parameters"] = choice.recommended ? nlohmann::json(parameters) : nlohmann::json(nullptr);
  // The whole config.pbtxt for the recommended row (its inputs and outputs).
  j["triton_config"] = choice.recommended ? nlohmann::json(TritonConfig(choice.recommended->run, parameters))
                                          : nlohmann::json(nullptr);
  return j;
}

namespace {

std::string Param(const std::string& key, const std::string& value) {
  return "parameters: {\n  key: \"" + key + "\"\n  value: { string_value: \"" + value + "\" }\n}\n";
}

}  // namespace

std::string TritonParameters(const SweepRow& row) {
  if (IsDefaultSweepRow(row)) return "";
  if (!row.aoti) return TritonParameters(row.settings);
  std::string out = Param("INFERENCE_MODE", row.settings.inference_mode ? "true" : "false");
  if (row.threads > 0) out += Param("INTRA_OP_THREAD_COUNT", std::to_string(row.threads));
  return out;
}

std::string TritonParameters(const ExecutionSettings& s) {
  auto param = [](const std::string& key, bool value) { return Param(key, value ? "true" : "false"); };
  std::string out;
  out += param("DISABLE_OPTIMIZED_EXECUTION", !s.optimized_execution);
  out += param("INFERENCE_MODE", s.inference_mode);
  if (s.jit_profiling) out += param("ENABLE_JIT_PROFILING", *s.jit_profiling);
  if (s.jit_executor) out += param("ENABLE_JIT_EXECUTOR", *s.jit_executor);
  if (s.tensor_fuser) out += param("ENABLE_TENSOR_FUSER", *s.tensor_fuser);
  if (s.cache_cleaning) out += param("ENABLE_CACHE_CLEANING", true);
  return out;
}

std::string RenderSweepJson(const std::vector<SweepRow>& rows) { return DumpJson(SweepJson(rows)); }

}  // namespace tsctl
