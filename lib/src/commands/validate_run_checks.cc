// The checks of `tsctl validate` that a model-check child's result gives
// (torch.run, torch.finite, torch.deterministic, torch.stateful,
// torch.reference, torch.intermediates): the typed result turned into words and verdicts.
#include <cmath>
#include <cstdio>

#include "validate_internal.h"

namespace tsctl {

namespace {
std::string Fmt(const char* format, double a, double b = 0, double c = 0, double d = 0, double e = 0, double f = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c, d, e, f);
  return buf;
}

// `x` rounded up to 3 significant digits: a tolerance printed with %.3g
// that still passes.
double CeilSignificant(double x) {
  if (!(x > 0) || !std::isfinite(x)) return x;
  const double unit = std::pow(10.0, std::floor(std::log10(x)) - 2);
  return std::ceil(x / unit * (1 - 1e-12)) * unit;
}

// torch.run of a method that did not run: its failure, a skip, or a WARN
// for want of inputs (never a silent pass).
CheckResult NotRunCheck(const ModelCheckResult& r, const std::string& prefix) {
  if (!r.run_error.empty()) return {check::kTorchRun, CheckStatus::kFail, prefix + r.run_error};
  if (r.run_skipped == "not run (--no-run)") return {check::kTorchRun, CheckStatus::kSkip, prefix + r.run_skipped};
  return {check::kTorchRun, CheckStatus::kWarn, prefix + "not run: " + r.run_skipped};
}

// torch.run of a method that ran: how its inputs came, and its outputs. A
// WARN when no inferred candidate ran cleanly (the guess, not the archive,
// may be at fault; given inputs decide); `suspect` says so. A WARN too when
// given inputs ran through a prepacked operator their shape contradicts.
CheckResult RanCheck(const ModelCheckResult& r, const std::string& prefix, bool& suspect) {
  std::string shapes;
  for (const auto& o : r.outputs) shapes += (shapes.empty() ? "" : ", ") + o.name + " " + o.desc;
  std::string how;
  suspect = false;
  if (r.input_source == "no arguments") {
    how = "ran without inputs";
  } else if (r.input_source == "inferred") {
    std::string about = r.inputs_note.empty() ? std::string() : r.inputs_note + "; ";
    how = "ran with inputs inferred: " + r.inputs_desc + " (" + about + "tried " +
          std::to_string(r.candidates_tried) + "; pin them with " + r.inputs_flags + ")";
    if (!r.guess_suspect.empty()) {
      suspect = true;
      return {check::kTorchRun, CheckStatus::kWarn,
              prefix + how + ": " + shapes + "; but " + r.guess_suspect + ", and no inferred candidate ran cleanly (" +
                  std::to_string(r.candidates.size()) +
                  " set aside): the inputs were guessed, so this says nothing against the archive: give real "
                  "inputs (--arg, --input, --load-inputs) to check the outputs"};
    }
  } else {
    how = "ran with inputs from " + r.input_source + (r.inputs_desc.empty() ? "" : " (" + r.inputs_desc + ")");
    if (!r.inputs_contradict.empty()) {
      return {check::kTorchRun, CheckStatus::kWarn,
              prefix + how + ": " + shapes + "; but the inputs contradict the model's weights: " + r.inputs_contradict +
                  " (the outputs are not what the model computes for inputs it takes)"};
    }
  }
  return {check::kTorchRun, CheckStatus::kPass, prefix + how + ": " + shapes};
}

// torch.finite and torch.deterministic. On inputs that contradict the
// weights (a prepacked operator read past them) NaN/Inf and runs that differ
// are the inputs' doing: a WARN that says so.
void OutputChecks(const ModelCheckResult& r, const std::string& prefix, std::vector<CheckResult>& out) {
  const bool contradict = !r.inputs_contradict.empty();
  const CheckStatus bad = contradict ? CheckStatus::kWarn : CheckStatus::kFail;
  const std::string why = contradict ? " (on inputs that contradict the model's weights: see torch.run)" : "";
  std::vector<std::string> nonfinite;
  for (const auto& o : r.outputs) {
    if (o.nonfinite > 0) nonfinite.push_back(o.name + " has " + std::to_string(o.nonfinite) + " NaN/Inf");
  }
  out.push_back({check::kTorchFinite, nonfinite.empty() ? CheckStatus::kPass : bad,
                 prefix + (nonfinite.empty() ? "outputs contain no NaN or Inf" : JoinAll(nonfinite, "; ") + why)});
  if (r.deterministic.has_value()) {
    out.push_back({check::kTorchDeterministic, *r.deterministic ? CheckStatus::kPass : bad,
                   prefix + (*r.deterministic ? std::string("two runs give identical outputs") +
                                                    (r.stateful ? " (from the loaded state each; calls on one copy "
                                                                  "differ: see torch.stateful)"
                                                                : "")
                                              : "two runs differ at " + r.determinism_note + " (max abs difference " +
                                                    Fmt("%.3g", r.max_run_diff) + ")" + why)});
  } else if (!r.determinism_note.empty()) {
    out.push_back({check::kTorchDeterministic, CheckStatus::kWarn, prefix + "not checked: " + r.determinism_note});
  }
}

// One output's comparison with the reference, in words.
std::string ReferencePart(const ReferenceLeaf& o) {
  std::string part = o.name;
  if (!o.compared) return part + " not compared: " + o.error;
  if (o.is_tensor && o.error.empty()) {
    part += Fmt(" max abs %.3g, mean abs %.3g, max rel %.3g, mean rel %.3g (rtol %.3g, atol %.3g)", o.max_abs, o.mean_abs,
                o.max_rel, o.mean_rel, o.rtol, o.atol);
  } else if (o.error.empty()) {
    part += " equal";
  }
  if (!o.pass) part += " FAILED";
  if (!o.pass && o.has_min_tolerance) {
    // Rounded up, so that the value printed passes.
    part += Fmt(" (would pass with --atol %.3g", CeilSignificant(o.min_atol));
    part += o.min_rtol < 0 ? std::string(" (no --rtol can: the reference is 0 where they differ))")
                           : Fmt(" or --rtol %.3g)", CeilSignificant(o.min_rtol));
  }
  if (!o.error.empty()) part += ": " + o.error;
  return part;
}

// torch.reference: compared nothing is a WARN, never a PASS.
CheckResult ReferenceCheck(const ModelCheckResult& r, const std::string& prefix) {
  bool all = true;
  int compared = 0;
  std::string msg;
  for (const auto& o : r.reference) {
    if (o.compared) {
      ++compared;
      all &= o.pass;
    }
    msg += (msg.empty() ? "" : "; ") + ReferencePart(o);
  }
  CheckStatus status = !all ? CheckStatus::kFail : compared == 0 ? CheckStatus::kWarn : CheckStatus::kPass;
  if (compared == 0 && msg.empty()) msg = "the outputs hold no value to compare";
  if (compared == 0) msg = "compared nothing: " + msg;
  return {check::kTorchReference, status, prefix + "against " + r.reference_source + ": " + msg};
}

// torch.intermediates (--compare-intermediates): compared nothing is a
// WARN, never a PASS.
CheckResult IntermediatesCheck(const IntermediatesResult& x, const std::string& prefix) {
  const std::string note = x.note.empty() ? "" : " (" + x.note + ")";
  if (!x.compared) return {check::kTorchIntermediates, CheckStatus::kWarn, prefix + "not compared: " + x.note};
  if (x.first_divergence >= 0) {
    return {check::kTorchIntermediates, CheckStatus::kFail,
            prefix + "the first value that differs from the reference model's is value " +
                std::to_string(x.first_divergence + 1) + " of the graph, " + x.node +
                (x.node_b == x.node ? "" : " (reference model: " + x.node_b + ")") + ": " + x.detail + "; the " +
                std::to_string(x.values - 1) + " before it match (matched by " + x.matched_by + ")" + note};
  }
  if (x.partial) {
    return {check::kTorchIntermediates, CheckStatus::kWarn,
            prefix + "the first " + std::to_string(x.values) + " intermediate values match the reference model's; " +
                x.note + ", and nothing after that is compared"};
  }
  if (x.values == 0) {
    return {check::kTorchIntermediates, CheckStatus::kWarn,
            prefix + "compared nothing: the graph computes no tensor" + note};
  }
  return {check::kTorchIntermediates, CheckStatus::kPass,
          prefix + "all " + std::to_string(x.values) + " intermediate values match the reference model's (matched by " +
              x.matched_by + ")" + note};
}

}  // namespace

// The checks of one method's run. `prefix` is "" for the one method, or
// "NAME: " when several are checked.
void RunChecks(const ModelCheckResult& r, const std::string& prefix, std::vector<CheckResult>& out) {
  if (!r.reference_error.empty() && !r.ran) {
    // An unreadable reference stops the run: report it, never a silent pass.
    out.push_back({check::kTorchReference, CheckStatus::kFail, prefix + r.reference_error});
    if (HasStatefulCheck(r)) out.push_back(StatefulCheck(r, prefix));
    return;
  }
  if (!r.ran) {
    out.push_back(NotRunCheck(r, prefix));
    if (HasStatefulCheck(r)) out.push_back(StatefulCheck(r, prefix));
    return;
  }
  bool suspect = false;
  out.push_back(RanCheck(r, prefix, suspect));
  // It ran on inputs that mean something (given, stored, or inferred and
  // run cleanly): the run is evidence. On guesses none of which ran
  // cleanly it is not (NOT RUN unless something FAILED).
  out.back().model_ran = !suspect;
  if (suspect) {
    if (HasStatefulCheck(r)) out.push_back(StatefulCheck(r, prefix));
    return;
  }
  OutputChecks(r, prefix, out);
  if (HasStatefulCheck(r)) out.push_back(StatefulCheck(r, prefix));
  if (r.reference_compared) {
    out.push_back(ReferenceCheck(r, prefix));
  } else if (!r.reference_error.empty()) {
    out.push_back({check::kTorchReference, CheckStatus::kFail, prefix + r.reference_error});
  } else if (!r.reference_skipped.empty()) {
    out.push_back({check::kTorchReference, CheckStatus::kWarn, prefix + r.reference_skipped});
  }
  if (r.intermediates) out.push_back(IntermediatesCheck(*r.intermediates, prefix));
}

}  // namespace tsctl
