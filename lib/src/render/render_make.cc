// Renderers of trace/script results, and of graph and code output as JSON.
#include "../text/json_util.h"
#include "render_json.h"
#include "tsctl/escape.h"
#include "tsctl/text_util.h"
#include "tsctl/torch_backend.h"

namespace tsctl {

inline constexpr int kMakeSchemaVersion = 1;

nlohmann::json ToJson(const MakeResult& r) {
  nlohmann::json j = {{"schema_version", kMakeSchemaVersion}, {"output", r.output}, {"written", !r.diverged},
                      {"bytes", r.bytes}, {"methods", r.methods}, {"inputs", r.inputs}};
  j["checks"] = nlohmann::json::array();
  for (const auto& c : r.checks) {
    j["checks"].push_back({{"inputs", c.inputs}, {"matched", c.matched}, {"max_abs", c.max_abs}, {"error", c.error}});
  }
  j["warnings"] = r.warnings;
  if (!r.saved_outputs.empty()) j["saved_outputs"] = r.saved_outputs;
  if (!r.format.empty()) {
    j["format"] = r.format;
    j["dynamic"] = r.dynamic;
  }
  return j;
}

void RenderText(const MakeResult& r, std::ostream& out) {
  for (const auto& w : r.warnings) out << "  warning   " << EscapeText(w) << '\n';
  for (const auto& c : r.checks) {
    out << (c.matched ? "  match     " : "  DIVERGES  ") << c.inputs;
    if (!c.error.empty()) {
      out << "  (" << EscapeText(c.error) << ")";
    } else if (c.max_abs < 0) {
      out << "  (outputs differ in structure, shape or dtype)";
    } else {
      out << "  (max abs difference " << c.max_abs << ")";
    }
    out << '\n';
  }
  if (r.diverged) return;
  std::string methods, inputs;
  for (const auto& m : r.methods) methods += (methods.empty() ? "" : ", ") + EscapeText(m);
  for (const auto& i : r.inputs) inputs += (inputs.empty() ? "" : ", ") + i;
  out << "wrote " << EscapeText(r.output) << " (" << HumanBytes(r.bytes) << "): ";
  if (r.format.empty()) {
    out << "methods " << methods;
  } else {
    out << (r.format == "pt2-aoti" ? ".pt2 AOTInductor package for the CPU, model " : ".pt2 exported program, model ")
        << methods;
    for (const auto& d : r.dynamic) out << "; dynamic " << EscapeText(d);
  }
  if (!inputs.empty()) out << "; inputs " << inputs << " in " << kInputsRecordPath;
  out << '\n';
  if (!r.saved_outputs.empty()) out << "wrote " << EscapeText(r.saved_outputs) << ": the trace's outputs on the example inputs\n";
}

std::string DivergenceMessage(const MakeResult& r, const std::string& mode) {
  std::string which;
  for (const auto& c : r.checks) {
    if (!c.matched) which += (which.empty() ? "" : "; ") + c.inputs;
  }
  // export checks the --input shapes when no --check-input is given.
  return "the " + mode + " diverges from the model on " + (mode == "export" ? "" : "--check-input ") + which + ": " +
         r.output + " not written";
}

nlohmann::json GraphToJson(const GraphOptions& o, const std::string& graph) {
  const char* variant = o.frozen ? "frozen" : o.inlined ? "inlined" : "graph";
  return {{"schema_version", kMakeSchemaVersion}, {"archive", o.path}, {"method", o.method}, {"variant", variant},
          {"graph", graph}};
}

nlohmann::json CodeToJson(const std::string& path, const std::string& compiled_method, const std::string& code) {
  nlohmann::json j = {{"schema_version", kMakeSchemaVersion}, {"archive", path}, {"compiled", !compiled_method.empty()},
                      {"code", code}};
  if (!compiled_method.empty()) j["method"] = compiled_method;
  return j;
}

std::string RenderJson(const MakeResult& result) { return DumpJson(ToJson(result)); }
std::string RenderGraphJson(const GraphOptions& options, const std::string& graph) {
  return DumpJson(GraphToJson(options, graph));
}
std::string RenderCodeJson(const std::string& path, const std::string& compiled_method, const std::string& code) {
  return DumpJson(CodeToJson(path, compiled_method, code));
}

}  // namespace tsctl
