// bench --shapes: the three points side by side (text), or each point's whole
// benchmark (JSON).
#include <cstdio>

#include "../text/json_util.h"
#include "render_json.h"
#include "../text/units.h"
#include "tsctl/bench.h"
#include "tsctl/escape.h"

namespace tsctl {

void RenderShapes(const std::vector<ShapePoint>& points, std::ostream& out) {
  if (points.empty()) return;
  const BenchResult* any = nullptr;
  for (const ShapePoint& p : points) {
    if (p.ok && !any) any = &p.result;
  }
  if (any) {
    out << "archive     " << EscapeText(any->path) << "\nmethod      " << EscapeText(any->method) << "\ndevice      "
        << any->device << "\n\n";
  }
  char line[512];
  std::snprintf(line, sizeof line, "%-5s %-40s %12s %12s %12s %12s %8s\n", "shape", "inputs", "median", "p90", "mean",
                "calls/s", "calls");
  out << line;
  for (const ShapePoint& p : points) {
    std::string args;
    for (const ArgSpec& a : p.args) args += (args.empty() ? "" : " ") + a.name + "=" + a.value;
    if (!p.ok) {
      out << p.point << std::string(p.point.size() < 6 ? 6 - p.point.size() : 1, ' ') << EscapeText(args)
          << "  failed: " << EscapeText(p.error) << '\n';
      continue;
    }
    std::vector<double> p90 = {90};
    const Stats s = ComputeStats(p.result, p90);
    const double at90 = s.percentiles.empty() ? 0 : s.percentiles.front().second;
    std::snprintf(line, sizeof line, "%-5s %-40s %12s %12s %12s %12.1f %8zu\n", p.point.c_str(), EscapeText(args).c_str(),
                  Ms(s.median).c_str(), Ms(at90).c_str(), Ms(s.mean).c_str(), s.throughput, p.result.latencies_ns.size());
    out << line;
  }
}

nlohmann::json ShapesJson(const std::vector<ShapePoint>& points, const std::vector<double>& percentiles) {
  nlohmann::json j;
  j["schema_version"] = kBenchSchemaVersion;
  j["shapes"] = nlohmann::json::array();
  for (const ShapePoint& p : points) {
    nlohmann::json args = nlohmann::json::object();
    for (const ArgSpec& a : p.args) args[a.name] = a.value;
    nlohmann::json row = {{"point", p.point}, {"args", args}, {"ok", p.ok}};
    if (p.ok) {
      row["result"] = ToJson(p.result, percentiles);
    } else {
      row["error"] = p.error;
    }
    j["shapes"].push_back(std::move(row));
  }
  return j;
}

std::string RenderShapesJson(const std::vector<ShapePoint>& points, const std::vector<double>& percentiles) {
  return DumpJson(ShapesJson(points, percentiles));
}

}  // namespace tsctl
