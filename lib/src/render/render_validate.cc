#include <pugixml.hpp>

#include <cstdio>
#include <sstream>

#include "junit.h"
#include "../text/json_util.h"
#include "render_json.h"
#include "sandbox.h"
#include "tensor_type.h"
#include "torch_child_sandbox.h"
#include "tsctl/escape.h"
#include "tsctl/torch_backend.h"
#include "tsctl/validate.h"

namespace tsctl {

void AddTensorTypes(nlohmann::json& model) {
  if (model.is_array()) {
    for (nlohmann::json& m : model) AddTensorTypes(m);
    return;
  }
  if (!model.is_object()) return;
  if (auto it = model.find("outputs"); it != model.end() && it->is_array()) {
    for (nlohmann::json& item : *it) {
      if (!item.is_object()) continue;
      std::optional<TensorDesc> tensor;
      if (auto t = item.find("tensor"); t != item.end() && t->is_object()) {
        tensor = TensorDesc{t->value("dtype", ""), t->value("shape", std::vector<int64_t>{}), t->value("device", "")};
      }
      item.erase("tensor");
      AddTensorDesc(item, tensor);
    }
  }
  if (auto it = model.find("input_args"); it != model.end() && it->is_array()) {
    for (nlohmann::json& item : *it) {
      if (item.is_object() && item.contains("value") && item["value"].is_string()) {
        AddTensorDesc(item, SpecTensor(item["value"].get<std::string>()));
      }
    }
  }
}

namespace {

// JUnit's time attribute: seconds, to the millisecond.
std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s < 0 ? 0.0 : s);
  return buf;
}

// A NOT RUN archive: a skipped testcase says so, never a pass.
void NotRunTestcase(pugi::xml_node& suite, const std::string& path, const std::string& why) {
  auto tc = suite.append_child("testcase");
  tc.append_attribute("classname") = path.c_str();
  tc.append_attribute("name") = "tsctl.result";
  tc.append_attribute("time") = "0.000";
  tc.append_child("skipped").append_attribute("message") = ("NOT RUN: " + EscapeText(why)).c_str();
}

}  // namespace

nlohmann::json SandboxJson() {
  const SandboxSupport& kernel = ProbeSandbox();
  return {{"on", SandboxOn()},
          {"seccomp", kernel.seccomp},
          {"landlock_abi", kernel.landlock_abi},
          {"layers", SandboxDescription()}};
}

nlohmann::json ToJson(const ValidationReport& report) {
  nlohmann::json j;
  j["schema_version"] = kValidateSchemaVersion;
  j["passed"] = report.Passed();
  j["result"] = ArchiveResultName(report.Result());
  j["strict"] = report.strict;
  j["allow_not_run"] = report.allow_not_run;
  j["sandbox"] = SandboxJson();
  j["archives"] = nlohmann::json::array();
  for (const auto& a : report.archives) {
    nlohmann::json aj = {{"path", a.path},
                         {"errors", a.Count(CheckStatus::kFail)},
                         {"warnings", a.Count(CheckStatus::kWarn)},
                         {"result", ArchiveResultName(a.Result(report.strict))},
                         {"schema", a.schema},
                         {"ops", a.ops},
                         {"details", Json(a.details)}};
    if (a.Result(report.strict) == ArchiveResult::kNotRun) aj["not_run"] = a.not_run;
    if (aj["details"].is_object() && aj["details"].contains("model")) AddTensorTypes(aj["details"]["model"]);
    aj["checks"] = nlohmann::json::array();
    aj["findings"] = nlohmann::json::array();
    for (const auto& c : a.checks) {
      aj["checks"].push_back({{"id", c.id}, {"status", CheckStatusName(c.status)}, {"message", c.message}});
      if (!c.item.empty()) aj["checks"].back()["item"] = c.item;
      if (c.status == CheckStatus::kFail || c.status == CheckStatus::kWarn) {
        aj["findings"].push_back({{"id", c.id},
                                  {"severity", c.status == CheckStatus::kFail ? "error" : "warning"},
                                  {"message", c.message},
                                  {"archive", a.path}});
      }
    }
    j["archives"].push_back(aj);
  }
  if (!report.not_checked.empty()) j["not_checked"] = report.not_checked;
  // Names and LibTorch messages that are not UTF-8 get "\xdd" escapes.
  MakeJsonUtf8(j);
  return j;
}

void RenderText(const ValidationReport& report, std::ostream& out) {
  for (const auto& a : report.archives) {
    out << EscapeText(a.path) << '\n';
    size_t width = 0;
    for (const auto& c : a.checks) width = std::max(width, c.id.size());
    for (const auto& c : a.checks) {
      out << "  " << CheckStatusName(c.status) << "  " << c.id << std::string(width - c.id.size(), ' ') << "  "
          << EscapeText(c.message) << '\n';
    }
    int errors = a.Count(CheckStatus::kFail), warnings = a.Count(CheckStatus::kWarn);
    const ArchiveResult result = a.Result(report.strict);
    out << "  result: " << ArchiveResultName(result) << " (" << errors << (errors == 1 ? " error, " : " errors, ") << warnings
        << (warnings == 1 ? " warning" : " warnings") << (report.strict ? ", strict" : "") << ")";
    if (result == ArchiveResult::kNotRun) {
      // The check above says why in full; the result line names it.
      out << ": " << (a.not_run_check.empty() ? EscapeText(a.not_run) : "the model did not run (" + a.not_run_check + " says why)")
          << (report.allow_not_run ? "; allowed by --allow-not-run" : "");
    }
    out << '\n';
  }
}

std::string RenderOperatorList(const ValidationReport& report, bool name_each) {
  std::string text;
  for (const auto& a : report.archives) {
    if (name_each) text += "# " + EscapeText(a.path) + "\n";
    for (const auto& op : a.ops) text += EscapeText(op) + "\n";  // a .pt2's targets, bytecode names: the archive's
  }
  return text;
}

std::string RenderJUnit(const ValidationReport& report) {
  pugi::xml_document doc;
  auto suites = JUnitSuites(doc, "tsctl validate");
  int total_tests = 0, total_failures = 0, total_skipped = 0;
  double total_seconds = 0;  // archives checked at once (--jobs) count each
  // EscapeText leaves only characters XML 1.0 allows; pugixml escapes markup.
  for (const auto& a : report.archives) {
    const std::string path = EscapeText(a.path);
    auto suite = suites.append_child("testsuite");
    suite.append_attribute("name") = path.c_str();
    int failures = 0, skipped = 0;
    for (const auto& c : a.checks) {
      const std::string message = EscapeText(c.message);
      auto tc = suite.append_child("testcase");
      tc.append_attribute("classname") = path.c_str();
      const std::string name = c.item.empty() ? c.id : c.id + "[" + EscapeText(c.item) + "]";
      tc.append_attribute("name") = name.c_str();
      tc.append_attribute("time") = Seconds(c.seconds).c_str();
      bool fail = c.status == CheckStatus::kFail || (report.strict && c.status == CheckStatus::kWarn);
      if (fail) {
        auto f = tc.append_child("failure");
        f.append_attribute("message") = message.c_str();
        f.append_attribute("type") = CheckStatusName(c.status);
        ++failures;
      } else if (c.status == CheckStatus::kSkip) {
        tc.append_child("skipped").append_attribute("message") = message.c_str();
        ++skipped;
      } else {
        tc.append_child("system-out").text() = (std::string(CheckStatusName(c.status)) + ": " + message).c_str();
      }
    }
    int tests = static_cast<int>(a.checks.size());
    if (a.Result(report.strict) == ArchiveResult::kNotRun) {
      NotRunTestcase(suite, path, a.not_run);
      ++skipped;
      ++tests;
    }
    suite.append_attribute("tests") = tests;
    suite.append_attribute("failures") = failures;
    suite.append_attribute("errors") = 0;
    suite.append_attribute("skipped") = skipped;
    suite.append_attribute("time") = Seconds(a.seconds).c_str();
    total_seconds += a.seconds;
    total_tests += tests;
    total_failures += failures;
    total_skipped += skipped;
  }
  // An archive that could not be checked is an error, never an empty pass.
  for (const auto& p : report.not_checked) {
    const std::string path = EscapeText(p);
    auto suite = suites.append_child("testsuite");
    suite.append_attribute("name") = path.c_str();
    auto tc = suite.append_child("testcase");
    tc.append_attribute("classname") = path.c_str();
    tc.append_attribute("name") = "tsctl.error";
    tc.append_attribute("time") = "0.000";
    auto e = tc.append_child("error");
    e.append_attribute("message") = "not checked: tsctl's error message is on stderr";
    e.append_attribute("type") = "ERROR";
    suite.append_attribute("tests") = 1;
    suite.append_attribute("failures") = 0;
    suite.append_attribute("errors") = 1;
    suite.append_attribute("skipped") = 0;
    suite.append_attribute("time") = "0.000";
    ++total_tests;
  }
  suites.append_attribute("tests") = total_tests;
  suites.append_attribute("failures") = total_failures;
  if (!report.not_checked.empty()) suites.append_attribute("errors") = static_cast<int>(report.not_checked.size());
  suites.append_attribute("skipped") = total_skipped;
  suites.append_attribute("time") = Seconds(total_seconds).c_str();
  std::ostringstream out;
  doc.save(out, "  ");
  return out.str();
}

std::string RenderJson(const ValidationReport& report) { return DumpJson(ToJson(report)); }

}  // namespace tsctl
