// The inputs of a model check: given, loaded, the reference's, bundled, or
// inferred candidates tried one by one (model_checker.h).
#include "model_checker.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <deque>
#include <regex>
#include <set>
#include <unordered_set>

#include "compare_values.h"
#include "py_values.h"
#include "tensors.h"
#include "torch_util.h"
#include "weight_checks.h"

namespace tsctl {
namespace {

// Each value as the reports show it ("Float[1, 3, 224, 224]", "List[int]"),
// joined by ", ".
std::string DescribeValues(const std::vector<c10::IValue>& values) {
  std::string s;
  for (const c10::IValue& v : values) s += (s.empty() ? "" : ", ") + (v.isTensor() ? Describe(v.toTensor()) : KindOf(v));
  return s;
}

// The bytes a candidate's inputs take.
uint64_t CandidateBytes(const std::vector<ArgSpec>& args) {
  uint64_t bytes = 0;
  for (const ArgSpec& a : args) bytes += ArgumentBytes(a.value);
  return bytes;
}

// Where the words a refinement reads came from, for its note.
const char* SourceOfError(const std::string& error, bool contradicted) {
  if (!contradicted) return "LibTorch's error";
  return error.rfind("prepacked::", 0) == 0 ? "a prepacked operator's weights" : "a stored tensor's feature";
}

}  // namespace

const ModelChecker::Lead* ModelChecker::MostInformative(const std::vector<Lead>& leads, const std::set<std::string>& tried) {
  // Ranked by how much the error says: 3 when a refinement rule reads it
  // (what an operator wanted, named), 2 for a check that names what it
  // expected, 1 for anything else, one more for a refinement never tried
  // (the steps or the time ran out); then by depth: a refined candidate got
  // past the errors before it. The first of equals.
  static const std::regex kNamed(R"(([Ee]xpected|must|invalid|out of (range|bounds)|mismatch|cannot be|KeyError))");
  auto rank = [&](const Lead& l) {
    int explains = !l.next_flags.empty() ? 3 : std::regex_search(l.error, kNamed) ? 2 : 1;
    if (!l.next_flags.empty() && !tried.count(l.next_flags)) ++explains;
    return std::pair{explains, l.depth};
  };
  const Lead* best = nullptr;
  for (const Lead& l : leads) {
    if (!best || rank(l) > rank(*best)) best = &l;
  }
  return best;
}

bool ModelChecker::GivenInputs() {
  const c10::FunctionSchema& schema = Schema();
  std::vector<ArgSpec> given = ArgsFromInputs(o_.inputs);
  given.insert(given.end(), o_.args.begin(), o_.args.end());
  given = ApplyValueRanges(given, Formals(schema), Ranges());  // kUsage goes to the caller
  if (!given.empty()) {
    for (const ArgSpec& a : given) {
      uint64_t bytes = ArgumentBytes(a.value);
      if (bytes > InputBudgetBytes()) {
        r_.run_error = "input " + (a.name.empty() ? a.value : a.name + "=" + a.value) + " needs " + HumanBytesOf(bytes) +
                       ", more than this machine's memory (" + HumanBytesOf(InputBudgetBytes()) + ")";
        return false;
      }
    }
    at::Generator gen = at::detail::createCPUGenerator(o_.seed);
    try {
      inputs_ = BuildArguments(schema, given, gen);  // kUsage errors go to the caller
    } catch (const c10::Error& e) {
      r_.run_error = std::string("cannot make the inputs: ") + FromTorch(e).what();
      return false;
    }
    r_.input_source = o_.input_source.empty() ? "--input/--arg" : o_.input_source;
    used_args_ = given;
    have_inputs_ = true;
  } else if (!o_.load_inputs_path.empty()) {
    inputs_ = LoadArguments(schema, o_.load_inputs_path, o_.input_source);  // kIo/kFormat/kUsage go to the caller
    r_.input_source = o_.input_source.empty() ? o_.load_inputs_path : o_.input_source;
    have_inputs_ = true;
  } else if (ref_has_inputs_) {
    inputs_ = ref_inputs_;
    inputs_from_reference_ = true;
    // The parent's words where it has some (a stored reference: where its
    // inputs came from when it was recorded).
    r_.input_source = o_.input_source.empty() ? r_.reference_source : o_.input_source;
    have_inputs_ = true;
  } else {
    try {
      std::string source;
      inputs_ = BundledInputs(module_, o_.method, source);
      if (!inputs_.empty()) {
        r_.input_source = source;
        have_inputs_ = true;
      }
    } catch (const std::exception&) {
      inputs_.clear();
    }
  }
  size_t required = 0;
  for (size_t i = 1; i < schema.arguments().size(); ++i) required += !schema.arguments()[i].default_value().has_value();
  if (!have_inputs_ && required == 0) {
    r_.input_source = "no arguments";
    have_inputs_ = true;
  }
  return true;
}

void ModelChecker::SkipReferenceOnOtherInputs() {
  if (!have_reference_ || !ref_has_inputs_ || inputs_from_reference_ || !have_inputs_) return;
  std::vector<ReferenceLeaf> leaves;
  CompareValues(c10::ivalue::Tuple::create(inputs_), c10::ivalue::Tuple::create(ref_inputs_), "inputs", Tolerances::Exact(),
                leaves);
  const bool same = !leaves.empty() && std::all_of(leaves.begin(), leaves.end(), [](const ReferenceLeaf& l) { return l.compared && l.pass; });
  if (same) return;
  auto describe = [](const std::vector<c10::IValue>& values) {
    const std::string s = DescribeValues(values);
    return s.empty() ? std::string("none") : s;
  };
  bool same_shapes = inputs_.size() == ref_inputs_.size();
  for (size_t i = 0; same_shapes && i < inputs_.size(); ++i) {
    same_shapes = inputs_[i].isTensor() && ref_inputs_[i].isTensor() && inputs_[i].toTensor().sizes() == ref_inputs_[i].toTensor().sizes();
  }
  have_reference_ = false;
  r_.reference_skipped = "not compared: " + r_.reference_source + " holds the outputs of other inputs (" +
                         describe(ref_inputs_) + (same_shapes ? ", other values" : "") + ") than this run's, from " +
                         r_.input_source + " (" + describe(inputs_) +
                         "): outputs on other inputs say nothing either way; without " + r_.input_source +
                         " the run takes the reference's inputs";
}

void ModelChecker::Take(std::vector<c10::IValue> values, c10::IValue a, c10::IValue b, const InputCandidate& c) {
  inputs_ = std::move(values);
  out1_ = std::move(a);
  out2_ = std::move(b);
  ran_once_ = true;
  used_args_ = c.args;
  r_.inputs_note = c.note;
  r_.input_source = "inferred";
  have_inputs_ = true;
}

bool ModelChecker::TryCandidate(const InputCandidate& c, const std::string& flags, std::optional<ModelChecker::Kept>& suspect, std::string& error,
                                bool& contradicted) {
  try {
    // A fresh generator per candidate, seeded as for given inputs: the
    // printed pin flags (--arg ...) make exactly these values again.
    at::Generator gen = at::detail::createCPUGenerator(o_.seed);
    std::vector<c10::IValue> values = BuildArguments(Schema(), c.args, gen);
    torch::jit::Method first = fresh_->Fresh();
    std::optional<PackedOpChecks> checks;
    if (prepacked_ || stored_elementwise_) checks.emplace(stored_elementwise_ ? StoredData(first.owner()) : std::unordered_set<const void*>{});
    c10::IValue a = Run(first, values, device_), b;
    if (o_.check_determinism) b = Run(fresh_->Fresh(), values, device_);
    const std::string contradiction = checks ? checks->Take() : std::string();
    checks.reset();
    std::string why = contradiction.empty() ? Suspect(a, b, o_.check_determinism) : contradiction;
    if (why.empty()) {
      Take(std::move(values), a, b, c);
      return true;
    }
    r_.candidates.push_back({flags, why});
    if (!suspect) suspect = Kept{std::move(values), a, b, c, why};
    error = contradiction;
    contradicted = !contradiction.empty();
  } catch (const std::exception& e) {
    error = FromTorch(e).what();
    r_.candidates.push_back({flags, "raised: " + error});
  }
  return false;
}

bool ModelChecker::TryCandidates() {
  const c10::FunctionSchema& schema = Schema();
  if (!o_.infer_inputs) {
    r_.run_skipped = "no inputs known: " + schema.name() + " takes " + DescribeArguments(schema) +
                     "; pass --arg NAME=VALUE (or --input SHAPE:DTYPE) for each argument";
    return false;
  }
  const auto start = Clock::now();
  // (Not on CUDA: the driver's mappings count against RLIMIT_DATA.)
  std::optional<DataLimit> limit;
  if (!device_.is_cuda()) limit.emplace(CandidateMemoryBudget());
  // Steps from errors, over the whole search: enough for a count solved
  // from a few probes (refine_count.cc) after the first scalings, once the
  // first candidates' chains have spent theirs.
  constexpr int kRefinements = 20;
  struct Queued {
    InputCandidate c;
    size_t base;
    int depth = 0;                // refinements since the inferred candidate
    std::vector<Attempt> earlier;  // the candidates it was refined from, with their errors
  };
  const std::vector<InputCandidate> inferred = InferInputCandidates(module_, *method_, o_.max_candidates);
  stored_elementwise_ = ElementwiseOnStored(*method_);
  std::deque<Queued> queue;
  const std::vector<FormalArg> formals = Formals(schema);
  for (size_t i = o_.skip_candidates; i < inferred.size(); ++i) {
    InputCandidate c = inferred[i];
    c.args = ApplyValueRanges(c.args, formals, Ranges());
    queue.push_back({std::move(c), i});
  }
  std::set<std::string> seen;
  int refinements = 0;
  std::optional<Kept> suspect;
  std::vector<Lead> leads;
  while (!queue.empty() && !have_inputs_) {
    const Queued q = std::move(queue.front());
    queue.pop_front();
    const std::string flags = PinFlags(q.c.args);
    if (!seen.insert(flags).second) continue;
    const double spent = std::chrono::duration<double>(Clock::now() - start).count();
    if (spent > o_.infer_budget_seconds) {
      r_.candidates_stop = "stopped after " + std::to_string(static_cast<int>(spent)) +
                           " s (the budget for inferred candidates is " +
                           std::to_string(static_cast<int>(o_.infer_budget_seconds)) + " s), " +
                           std::to_string(queue.size() + 1) + " candidates untried";
      break;
    }
    if (const uint64_t bytes = CandidateBytes(q.c.args); bytes > (uint64_t{1} << 30)) {
      r_.candidates.push_back({flags, "not tried: its inputs need " + HumanBytesOf(bytes)});
      continue;
    }
    ++r_.candidates_tried;
    // If this candidate crashes the child, the parent names it and can
    // start a fresh child past it (skip_candidates).
    if (o_.progress) {
      o_.progress({.kind = ProgressEvent::Kind::kTrying, .text = flags, .done = static_cast<int64_t>(q.base)});
    }
    if (Fault("crash-guess") || (Fault("crash-first-guess") && q.base == 0)) std::raise(SIGSEGV);
    std::string error;
    bool contradicted = false;
    if (TryCandidate(q.c, flags, suspect, error, contradicted)) break;
    if (error.empty()) continue;
    std::optional<Refinement> next = RefineFromError(q.c.args, error, SourceOfError(error, contradicted), q.earlier);
    if (next) next->args = ApplyValueRanges(next->args, formals, Ranges());
    leads.push_back({flags, error, next ? PinFlags(next->args) : std::string(), q.depth});
    if (next && refinements < kRefinements) {
      ++refinements;
      std::vector<Attempt> earlier = q.earlier;
      earlier.push_back({q.c.args, error.size() > 4096 ? error.substr(error.size() - 4096) : error});
      queue.push_front({InputCandidate{next->args, next->note}, q.base, q.depth + 1, std::move(earlier)});
    }
  }
  if (!have_inputs_ && suspect) {
    Take(std::move(suspect->values), suspect->out1, suspect->out2, suspect->c);
    r_.guess_suspect = suspect->why;
  }
  if (have_inputs_) return true;
  DescribeNoneRan(leads, seen, refinements >= kRefinements);
  return false;
}

void ModelChecker::DescribeNoneRan(const std::vector<Lead>& leads, const std::set<std::string>& tried, bool steps_spent) {
  std::string why;
  if (const Lead* best = MostInformative(leads, tried)) {
    why = " (the error that explains the most, for " + best->flags + ": " + best->error;
    if (!best->next_flags.empty() && !tried.count(best->next_flags)) {
      why += std::string("; what it asks for, not tried (") +
             (steps_spent ? "the steps from errors were all spent" : "the search stopped") + "): " + best->next_flags;
    }
    why += ")";
  } else if (!r_.candidates.empty()) {
    why = " (last: " + r_.candidates.back().outcome + ")";
  }
  r_.run_skipped = "no inputs known and none of " + std::to_string(r_.candidates_tried) + " inferred candidates ran" + why +
                   (r_.candidates_stop.empty() ? std::string() : "; " + r_.candidates_stop) + "; " + Schema().name() +
                   " takes " + DescribeArguments(Schema()) + ": pass --arg NAME=VALUE for each";
}

void ModelChecker::DescribeInputs() {
  r_.input_args = used_args_;
  if (!used_args_.empty()) {
    r_.inputs_desc = DescribeArgs(used_args_);
    r_.inputs_flags = PinFlags(used_args_);
    return;
  }
  const auto& formal = Schema().arguments();
  std::vector<c10::IValue> typed;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    typed.push_back(i + 1 < formal.size() ? Retype(formal[i + 1].type(), inputs_[i]) : inputs_[i]);
  }
  r_.inputs_desc = DescribeValues(typed);
}

}  // namespace tsctl
