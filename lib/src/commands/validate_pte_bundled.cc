// validate of a bundled program (.bpte): pte.case, one result per bundled
// test case, from tsctl-pte-runner --bundled (lib/src/executorch/
// runner_bundled.cc), which sets the case's inputs, executes the method and
// compares each output with the expected one as ExecuTorch's own verifier
// does (docs/manual/pte.md, "Bundled programs").
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../text/units.h"
#include "tsctl/escape.h"
#include "validate_internal.h"

namespace tsctl {
namespace {

using nlohmann::json;

// Why output `i` differs, or "" where it is close.
std::string Differs(const json& o, size_t i) {
  if (o.value("close", false)) return "";
  const std::string at = "output " + std::to_string(i) + ": ";
  if (o.contains("why")) return at + o["why"].get<std::string>();
  if (o.value("kind", "") != "tensor") return at + "the value differs";
  std::string s = at + std::to_string(o.value("mismatched", 0)) + " of " + std::to_string(o.value("numel", 0)) +
                  " elements differ";
  s += o.value("bitwise", false) ? " (compared bit for bit)"
                                 : " beyond rtol " + ThreeDigits(o.value("rtol", 0.0)) + ", atol " + ThreeDigits(o.value("atol", 0.0));
  if (const json& f = o.value("first", json()); f.is_object()) {
    s += "; the first at element " + std::to_string(f.value("at", 0));
    if (f.contains("want")) s += ": " + ThreeDigits(f["want"].get<double>()) + " expected, " + ThreeDigits(f["got"].get<double>()) + " returned";
  }
  return s;
}

CheckResult CaseResult(const json& c, const std::string& method, const std::string& said) {
  const std::string item = method + "#" + std::to_string(c.value("index", 0));
  const std::string prefix = EscapeText(method) + " case " + std::to_string(c.value("index", 0)) + ": ";
  CheckResult r{check::kPteCase, CheckStatus::kFail, ""};
  r.item = item;
  if (c.contains("input_error")) {
    r.message = prefix + "its inputs cannot be set: " + c["input_error"].get<std::string>();
    return r;
  }
  r.model_ran = true;
  if (c.contains("run_error")) {
    r.message = prefix + "execute failed on the bundle's inputs: " + c["run_error"].get<std::string>() +
                (said.empty() ? "" : "; the runtime said: " + said);
    return r;
  }
  const json& outputs = c.value("outputs", json::array());
  const size_t returned = c.value("returned", size_t{0});
  if (outputs.empty() && returned > 0) {
    r.status = CheckStatus::kWarn;
    r.message = prefix + "ran; the bundle expects no outputs, so nothing was compared";
    return r;
  }
  std::vector<std::string> differ;
  double largest = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (std::string d = Differs(outputs[i], i); !d.empty()) differ.push_back(d);
    largest = std::max(largest, outputs[i].value("max_abs", 0.0));
  }
  const size_t expected = c.value("expected", outputs.size());
  if (returned != expected) {
    differ.insert(differ.begin(), "the method returned " + std::to_string(returned) + " outputs, the bundle expects " +
                                      std::to_string(expected));
  }
  if (!differ.empty()) {
    r.message = prefix + JoinAll(differ, "; ");
    return r;
  }
  r.status = CheckStatus::kPass;
  r.message = prefix + std::to_string(outputs.size()) + (outputs.size() == 1 ? " output equals" : " outputs equal") +
              " the bundle's expected within its tolerances (largest absolute error " + ThreeDigits(largest) + ")";
  return r;
}

}  // namespace

void BundledCaseChecks(const json& method, const std::string& runtime_said, std::vector<CheckResult>& out) {
  const std::string name = method.value("name", "?");
  for (const json& c : method.value("cases", json::array())) out.push_back(CaseResult(c, name, runtime_said));
}

}  // namespace tsctl
