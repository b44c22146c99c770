// tsctl compat's outputs: a table (text), {"archives": [...]} (json,
// docs/schemas/compat.schema.json) and JUnit (one testcase per archive and
// target: incompatible fails, unknown is skipped, never passed). Strings from
// an archive are escaped where they enter a reason (compat_judge.cc).
#include <pugixml.hpp>

#include <algorithm>
#include <sstream>

#include "junit.h"
#include "../text/json_util.h"
#include "tsctl/compat.h"
#include "tsctl/escape.h"

namespace tsctl {
namespace {

std::string CompatText(const CompatReport& report) {
  std::ostringstream out;
  size_t width = 6;
  for (const auto& a : report.archives) {
    for (const auto& t : a.targets) width = std::max(width, t.target.size());
  }
  for (const auto& a : report.archives) {
    out << EscapeText(a.path) << (a.format.empty() ? "" : " (" + a.format + ")") << '\n';
    if (!a.error.empty()) out << "  error: " << EscapeText(a.error) << '\n';
    for (const auto& t : a.targets) {
      out << "  " << t.target << std::string(width - t.target.size() + 2, ' ') << CompatVerdictName(t.verdict) << '\n';
      for (const auto& r : t.reasons) out << "    " << (t.verdict == CompatVerdict::kCompatible ? "" : "- ") << r << '\n';
    }
  }
  return out.str();
}

std::string Json(const CompatReport& report) {
  nlohmann::json archives = nlohmann::json::array();
  for (const auto& a : report.archives) {
    nlohmann::json targets = nlohmann::json::array();
    for (const auto& t : a.targets) {
      targets.push_back({{"target", t.target}, {"verdict", CompatVerdictName(t.verdict)}, {"reasons", t.reasons}});
    }
    nlohmann::json entry = {{"path", a.path}, {"format", a.format}, {"targets", targets}};
    if (!a.error.empty()) entry["error"] = a.error;
    archives.push_back(entry);
  }
  return DumpJson({{"schema_version", 1}, {"archives", archives}, {"data", CompatDataNames()}, {"data_date", CompatDataDate()}}) +
         "\n";
}

std::string JUnit(const CompatReport& report) {
  pugi::xml_document doc;
  auto suites = JUnitSuites(doc, "tsctl compat");
  for (const auto& a : report.archives) {
    const std::string path = EscapeText(a.path);
    auto suite = suites.append_child("testsuite");
    suite.append_attribute("name") = path.c_str();
    int failures = 0, skipped = 0, errors = 0;
    if (!a.error.empty()) {
      auto tc = suite.append_child("testcase");
      tc.append_attribute("classname") = path.c_str();
      tc.append_attribute("name") = "tsctl.error";
      tc.append_child("error").append_attribute("message") = EscapeText(a.error).c_str();
      ++errors;
    }
    for (const auto& t : a.targets) {
      std::string reasons;
      for (const auto& r : t.reasons) reasons += (reasons.empty() ? "" : "; ") + r;
      auto tc = suite.append_child("testcase");
      tc.append_attribute("classname") = path.c_str();
      tc.append_attribute("name") = t.target.c_str();
      if (t.verdict == CompatVerdict::kIncompatible) {
        auto f = tc.append_child("failure");
        f.append_attribute("message") = reasons.c_str();
        f.append_attribute("type") = "incompatible";
        ++failures;
      } else if (t.verdict == CompatVerdict::kUnknown) {
        tc.append_child("skipped").append_attribute("message") = ("unknown: " + reasons).c_str();
        ++skipped;
      } else {
        tc.append_child("system-out").text() = ("compatible: " + reasons).c_str();
      }
    }
    suite.append_attribute("tests") = static_cast<int>(a.targets.size()) + errors;
    suite.append_attribute("failures") = failures;
    suite.append_attribute("errors") = errors;
    suite.append_attribute("skipped") = skipped;
  }
  std::ostringstream out;
  doc.save(out, "  ");
  return out.str();
}

}  // namespace

std::string RenderCompat(const CompatReport& report, OutputFormat format) {
  switch (format) {
    case OutputFormat::kJson: return Json(report);
    case OutputFormat::kJUnit: return JUnit(report);
    case OutputFormat::kText: return CompatText(report);
    default: break;
  }
  NoRenderer(format, "compat", {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kJUnit});
}

}  // namespace tsctl
