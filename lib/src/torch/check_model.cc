// The LibTorch half of `tsctl validate`, run in a child process.
#include "check_model.h"

#include <torch/csrc/jit/mobile/import.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/serialize.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <deque>
#include <fstream>
#include <set>
#include <thread>

#include "arguments.h"
#include "compare_values.h"
#include "infer_inputs.h"
#include "py_values.h"
#include "tensors.h"
#include "torch_util.h"

namespace tsctl {
namespace {

using Clock = std::chrono::steady_clock;

// {"inputs": (...), "outputs": value}, or the outputs alone.
void SplitReference(const c10::IValue& ref, std::vector<c10::IValue>& inputs, bool& has_inputs, c10::IValue& outputs) {
  if (ref.isGenericDict()) {
    auto dict = ref.toGenericDict();
    if (dict.contains("outputs")) {
      outputs = dict.at("outputs");
      if (dict.contains("inputs")) {
        inputs = ArgumentList(dict.at("inputs"));
        has_inputs = true;
      }
      return;
    }
  }
  outputs = ref;
}

// Inputs over this many bytes are refused before they are allocated: the
// machine's memory.
uint64_t InputBudgetBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : uint64_t{8} << 30;
}

std::string HumanBytesOf(uint64_t b) {
  char buf[64];
  if (b == UINT64_MAX) return "more than 16 EiB";
  std::snprintf(buf, sizeof buf, "%.3g GiB", static_cast<double>(b) / (1 << 30));
  return buf;
}

// Inferred candidates are guesses, and a wrong guess can make a model
// allocate without bound (a detection model resizing a 1x16000 "image" to a
// 320-pixel short side asked for 24 GiB): while they run, the child may grow
// its data (heap and anonymous mappings, RLIMIT_DATA) by at most this much, so
// a runaway candidate fails with LibTorch's allocation error and the next one
// is tried, instead of the kernel's OOM killer ending the child or something
// else on the machine. Half the machine's memory, at most 8 GiB.
uint64_t CandidateMemoryBudget() { return std::min<uint64_t>(InputBudgetBytes() / 2, uint64_t{8} << 30); }

// The data size (heap, anonymous mappings, stack) of this process, from
// /proc/self/statm; 0 if unknown.
uint64_t DataBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0, shared = 0, text = 0, lib = 0, data = 0;
  if (!(statm >> size >> resident >> shared >> text >> lib >> data)) return 0;
  return data * static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE));
}

// Lowers RLIMIT_DATA to what the process uses now plus `extra` for its
// lifetime, and puts the old limit back after.
class DataLimit {
 public:
  explicit DataLimit(uint64_t extra) {
    uint64_t now = DataBytes();
    if (now == 0 || ::getrlimit(RLIMIT_DATA, &old_) != 0) return;
    rlimit lowered = old_;
    lowered.rlim_cur = static_cast<rlim_t>(now + extra);
    if (old_.rlim_cur != RLIM_INFINITY && lowered.rlim_cur > old_.rlim_cur) return;
    set_ = ::setrlimit(RLIMIT_DATA, &lowered) == 0;
  }
  ~DataLimit() {
    if (set_) ::setrlimit(RLIMIT_DATA, &old_);
  }
  DataLimit(const DataLimit&) = delete;
  DataLimit& operator=(const DataLimit&) = delete;

 private:
  rlimit old_{};
  bool set_ = false;
};

// Runs the method on `inputs` (retyped by its schema).
// Copies of the model as it loaded: every run that a check compares starts
// from the loaded state, so a model whose forward updates its own buffers or
// attributes (a recurrent policy keeping its hidden state) is compared with
// itself, not with its next step. A module that cannot be cloned runs as is.
class FreshCopies {
 public:
  FreshCopies(const torch::jit::Module& module, const std::string& method) : method_(method) {
    try {
      pristine_ = module.clone();
    } catch (const std::exception&) {
      pristine_.reset();
    }
    if (!pristine_) fallback_ = module;
  }
  // A method of a fresh copy (the copy is kept alive with it).
  torch::jit::Method Fresh() {
    if (!pristine_) return fallback_->get_method(method_);
    copies_.push_back(pristine_->clone());
    if (copies_.size() > 2) copies_.erase(copies_.begin());
    return copies_.back().get_method(method_);
  }
  bool cloned() const { return pristine_.has_value(); }

 private:
  std::string method_;
  std::optional<torch::jit::Module> pristine_, fallback_;
  std::vector<torch::jit::Module> copies_;
};

c10::IValue Run(torch::jit::Method method, std::vector<c10::IValue> inputs) {
  const auto& formal = method.function().getSchema().arguments();
  for (size_t i = 0; i < inputs.size() && i + 1 < formal.size(); ++i) inputs[i] = Retype(formal[i + 1].type(), inputs[i]);
  c10::InferenceMode guard;
  return method(std::move(inputs));
}

// Compares two runs' outputs exactly (NaN and Inf in the same places count
// as equal) into r.deterministic, r.determinism_note and r.max_run_diff.
void CompareRuns(const c10::IValue& out1, const c10::IValue& out2, ModelCheckResult& r) {
  std::vector<ReferenceLeaf> leaves;
  Tolerances exact;
  exact.rtol = {0};
  exact.atol = {0};
  CompareValues(out2, out1, "output", exact, leaves);
  bool same = true, all_compared = true;
  for (const auto& l : leaves) {
    if (!l.compared) {
      all_compared = false;
      r.determinism_note = l.name + ": " + l.error;
      continue;
    }
    if (!l.pass) {
      same = false;
      if (std::isfinite(l.max_abs)) r.max_run_diff = std::max(r.max_run_diff, l.max_abs);
      if (r.determinism_note.empty()) r.determinism_note = l.name + (l.error.empty() ? "" : ": " + l.error);
    }
  }
  if (!same) r.deterministic = false;
  else if (all_compared && !leaves.empty()) r.deterministic = true;
  else if (leaves.empty()) r.determinism_note = "the outputs hold nothing to compare";
}

// What makes a run on guessed inputs suspect: NaN/Inf in its outputs, or a
// second run that differs (`out2` set when `twice`). "" if neither.
std::string Suspect(const c10::IValue& out1, const c10::IValue& out2, bool twice) {
  for (const OutputSummary& s : SummarizeOutputs(out1, "output")) {
    if (s.nonfinite > 0) return std::to_string(s.nonfinite) + " NaN/Inf in " + s.name;
  }
  if (!twice) return "";
  ModelCheckResult runs;
  CompareRuns(out1, out2, runs);
  if (runs.deterministic == false) return "two runs differ at " + runs.determinism_note;
  return "";
}

}  // namespace

ModelCheckResult CheckModel(const ModelCheckOptions& o) {
  // Test hook: TSCTL_FAULT_CHECK_MODEL=crash|hang|hang-run makes this child
  // crash or hang (while loading, or while running), so tests can check that
  // validate reports it instead of dying; crash-guess crashes it on every
  // inferred candidate, crash-first-guess on the first only (as XNNPACK does
  // on a wrong channel count).
  const char* fault = std::getenv("TSCTL_FAULT_CHECK_MODEL");
  if (fault && std::string(fault) == "crash") std::raise(SIGSEGV);
  if (fault && std::string(fault) == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
  LoadOperatorLibraries(o.load_libraries);
  UseQuantizedEngine(o.quantized_engine);  // kUsage goes to the caller
  ModelCheckResult r;
  if (o.progress) o.progress("loading");
  if (o.check_mobile) {
    // What an Android/iOS app's LiteModuleLoader does with the file.
    try {
      torch::jit::_load_for_mobile(o.load_path.empty() ? o.path : o.load_path, torch::Device(torch::kCPU));
      r.mobile_loaded = true;
    } catch (const std::exception& e) {
      r.mobile_loaded = false;
      r.mobile_error = FromTorch(e).what();
    }
  }
  torch::jit::Module module;
  torch::jit::ExtraFilesMap extra;
  if (o.reference_from_archive) extra["tsctl_reference.pt"] = "";
  auto t0 = Clock::now();
  try {
    module = torch::jit::load(o.load_path.empty() ? o.path : o.load_path, torch::Device(torch::kCPU), extra);
  } catch (const std::exception& e) {
    r.load_error = FromLoadFailure(e, o.path).what();
    return r;
  }
  module.eval();
  if (o.progress) o.progress("loaded");
  r.loaded = true;
  r.load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  for (const auto& m : module.get_methods()) r.methods.push_back(m.name());
  try {
    r.ops = torch::jit::export_opnames(module);
  } catch (const std::exception& e) {
    r.ops_error = FromTorch(e).what();
  }
  auto method = module.find_method(o.method);
  r.method_found = method.has_value();
  if (!method) return r;
  FreshCopies fresh(module, o.method);
  const c10::FunctionSchema& schema = method->function().getSchema();
  std::ostringstream schema_text;
  schema_text << schema;
  r.schema = schema_text.str();
  if (o.progress) o.progress("method " + r.schema);  // kept by the parent if this child dies later

  // The reference, if any.
  std::vector<c10::IValue> ref_inputs;
  bool ref_has_inputs = false;
  c10::IValue expected;
  bool have_reference = false;
  if (!o.reference_path.empty() || (o.reference_from_archive && !extra["tsctl_reference.pt"].empty())) {
    try {
      if (!o.reference_path.empty()) {
        SplitReference(LoadValueFile(o.reference_path), ref_inputs, ref_has_inputs, expected);
        r.reference_source = o.reference_label.empty() ? o.reference_path : o.reference_label;
      } else {
        char tmpl[] = "/tmp/tsctl-ref-XXXXXX";
        int fd = ::mkstemp(tmpl);
        if (fd < 0) throw Error(ErrorKind::kIo, "cannot create a temporary file");
        const std::string& bytes = extra["tsctl_reference.pt"];
        bool written = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
        ::close(fd);
        try {
          if (!written) throw Error(ErrorKind::kIo, "cannot write a temporary file");
          SplitReference(LoadValueFile(tmpl), ref_inputs, ref_has_inputs, expected);
        } catch (...) {
          ::unlink(tmpl);
          throw;
        }
        ::unlink(tmpl);
        r.reference_source = "extra/tsctl_reference.pt";
      }
      have_reference = true;
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kIo && !o.reference_path.empty()) {
        throw;  // a missing --reference is an I/O error, not a finding
      }
      if (!o.reference_label.empty()) {
        // A reference recorded by tsctl (--reference-model): name the model,
        // not its temporary file, and give no advice on writing the file.
        std::string what = e.what();
        const std::string file = o.reference_path + ": ";
        if (what.rfind(file, 0) == 0) what.erase(0, file.size());  // "FILE: holds an object of ..."
        for (size_t at = what.find(o.reference_path); at != std::string::npos; at = what.find(o.reference_path, at))
          what.replace(at, o.reference_path.size(), "its recording");
        r.reference_error = "cannot compare with the " + o.reference_label + ": " + what;
        return r;
      }
      r.reference_error = std::string("cannot read the reference: ") + e.what() +
                          " (write it with torch.save({'inputs': (x,), 'outputs': y}, f))";
      return r;
    } catch (const std::exception& e) {
      r.reference_error = std::string("cannot read the reference: ") + FromTorch(e).what();
      return r;
    }
  }

  // Inputs, from the first source that has them.
  at::Generator gen = at::detail::createCPUGenerator(0);
  std::vector<c10::IValue> inputs;
  bool have_inputs = false;
  std::vector<ArgSpec> given = ArgsFromInputs(o.inputs);
  given.insert(given.end(), o.args.begin(), o.args.end());
  std::vector<ArgSpec> used_args;
  // The flags that pin `args` on the command line.
  auto pin_flags = [&o](const std::vector<ArgSpec>& args) {
    return (o.method == "forward" ? std::string() : "--method " + o.method + " ") + ArgsAsFlags(args);
  };
  if (!given.empty()) {
    for (const ArgSpec& a : given) {
      uint64_t bytes = ArgumentBytes(a.value);
      if (bytes > InputBudgetBytes()) {
        r.run_error = "input " + (a.name.empty() ? a.value : a.name + "=" + a.value) + " needs " + HumanBytesOf(bytes) +
                      ", more than this machine's memory (" + HumanBytesOf(InputBudgetBytes()) + ")";
        return r;
      }
    }
    try {
      inputs = BuildArguments(schema, given, gen);  // kUsage errors go to the caller
    } catch (const c10::Error& e) {
      r.run_error = std::string("cannot make the inputs: ") + FromTorch(e).what();
      return r;
    }
    r.input_source = o.input_source.empty() ? "--input/--arg" : o.input_source;
    used_args = given;
    have_inputs = true;
  } else if (!o.load_inputs_path.empty()) {
    inputs = LoadArguments(schema, o.load_inputs_path);  // kIo/kFormat/kUsage go to the caller
    r.input_source = o.load_inputs_path;
    have_inputs = true;
  } else if (ref_has_inputs) {
    inputs = ref_inputs;
    r.input_source = r.reference_source;
    have_inputs = true;
  } else {
    try {
      std::string source;
      inputs = BundledInputs(module, o.method, source);
      if (!inputs.empty()) {
        r.input_source = source;
        have_inputs = true;
      }
    } catch (const std::exception&) {
      inputs.clear();
    }
  }
  size_t required = 0;
  for (size_t i = 1; i < schema.arguments().size(); ++i) required += !schema.arguments()[i].default_value().has_value();
  if (!have_inputs && required == 0) {
    r.input_source = "no arguments";
    have_inputs = true;
  }
  if (!o.run) {
    r.run_skipped = "not run (--no-run)";
    return r;
  }
  if (fault && std::string(fault) == "hang-run") std::this_thread::sleep_for(std::chrono::hours(1));
  c10::IValue out1, out2;
  bool ran_once = false;
  auto run_start = Clock::now();
  if (!have_inputs) {
    if (!o.infer_inputs) {
      r.run_skipped = "no inputs known: " + schema.name() + " takes " + DescribeArguments(schema) +
                      "; pass --arg NAME=VALUE (or --input SHAPE:DTYPE) for each argument";
      return r;
    }
    // Each candidate is a guess: one that raises, gives NaN/Inf or differs
    // between two runs is set aside (with why) and the next tried. If none
    // runs cleanly, the first that ran is kept and r.guess_suspect says what
    // was wrong: validate then warns, since the guess, not the archive, may
    // be at fault.
    DataLimit limit(CandidateMemoryBudget());
    // The inferred candidates (from skip_candidates on), each followed by
    // what LibTorch's error for it says to try next (RefineFromError: a
    // convolution's channels, a matrix product's size, ...), at most
    // kRefinements times. `base` is the inferred candidate a queued one comes
    // from: what the progress line and skip_candidates count.
    constexpr int kRefinements = 8;
    struct Queued {
      InputCandidate c;
      size_t base;
    };
    const std::vector<InputCandidate> inferred = InferInputCandidates(module, *method, o.max_candidates);
    std::deque<Queued> queue;
    for (size_t i = o.skip_candidates; i < inferred.size(); ++i) queue.push_back({inferred[i], i});
    std::set<std::string> seen;
    int refinements = 0;
    struct Kept {
      std::vector<c10::IValue> values;
      c10::IValue out1, out2;
      InputCandidate c;
      std::string why;
    };
    std::optional<Kept> suspect;  // the first that ran, though not cleanly
    while (!queue.empty()) {
      const Queued q = std::move(queue.front());
      queue.pop_front();
      const InputCandidate& c = q.c;
      const std::string flags = pin_flags(c.args);
      if (!seen.insert(flags).second) continue;
      const double spent = std::chrono::duration<double>(Clock::now() - run_start).count();
      if (spent > o.infer_budget_seconds) {
        r.candidates_stop = "stopped after " + std::to_string(static_cast<int>(spent)) +
                            " s (the budget for inferred candidates is " +
                            std::to_string(static_cast<int>(o.infer_budget_seconds)) + " s), " +
                            std::to_string(queue.size() + 1) + " candidates untried";
        break;
      }
      uint64_t bytes = 0;
      for (const ArgSpec& a : c.args) bytes += ArgumentBytes(a.value);
      if (bytes > (uint64_t{1} << 30)) {
        r.candidates.push_back({flags, "not tried: its inputs need " + HumanBytesOf(bytes)});
        continue;
      }
      ++r.candidates_tried;
      // If this candidate crashes the child, the parent names it and can
      // start a fresh child past it (skip_candidates).
      if (o.progress) o.progress("trying " + std::to_string(q.base) + " " + flags);  // TriedCandidate() reads it
      if (fault && (std::string(fault) == "crash-guess" || (std::string(fault) == "crash-first-guess" && q.base == 0))) {
        std::raise(SIGSEGV);
      }
      try {
        // A fresh generator per candidate, seeded as for given inputs: the
        // printed pin flags (--arg ...) make exactly these values again.
        at::Generator candidate_gen = at::detail::createCPUGenerator(0);
        std::vector<c10::IValue> values = BuildArguments(schema, c.args, candidate_gen);
        c10::IValue a = Run(fresh.Fresh(), values), b;
        if (o.check_determinism) b = Run(fresh.Fresh(), values);
        std::string why = Suspect(a, b, o.check_determinism);
        if (why.empty()) {
          inputs = std::move(values);
          out1 = a;
          out2 = b;
          ran_once = true;
          used_args = c.args;
          r.inputs_note = c.note;
          r.input_source = "inferred";
          have_inputs = true;
          break;
        }
        r.candidates.push_back({flags, why});
        if (!suspect) suspect = Kept{std::move(values), a, b, c, why};
      } catch (const std::exception& e) {
        const std::string error = FromTorch(e).what();
        r.candidates.push_back({flags, "raised: " + error});
        if (refinements < kRefinements) {
          if (std::optional<Refinement> next = RefineFromError(c.args, error)) {
            ++refinements;
            queue.push_front({InputCandidate{next->args, next->note}, q.base});
          }
        }
      }
    }
    if (!have_inputs && suspect) {
      inputs = std::move(suspect->values);
      out1 = suspect->out1;
      out2 = suspect->out2;
      ran_once = true;
      used_args = suspect->c.args;
      r.inputs_note = suspect->c.note;
      r.input_source = "inferred";
      r.guess_suspect = suspect->why;
      have_inputs = true;
    }
    if (!have_inputs) {
      std::string last = r.candidates.empty() ? std::string() : r.candidates.back().outcome;
      r.run_skipped = "no inputs known and none of " + std::to_string(r.candidates_tried) + " inferred candidates ran" +
                      (last.empty() ? std::string() : " (last: " + last + ")") +
                      (r.candidates_stop.empty() ? std::string() : "; " + r.candidates_stop) + "; " + schema.name() +
                      " takes " + DescribeArguments(schema) + ": pass --arg NAME=VALUE for each";
      return r;
    }
  }
  r.input_args = used_args;
  if (!used_args.empty()) {
    r.inputs_desc = DescribeArgs(used_args);
    r.inputs_flags = pin_flags(used_args);
  } else {
    const auto& formal = schema.arguments();
    for (size_t i = 0; i < inputs.size(); ++i) {
      c10::IValue v = i + 1 < formal.size() ? Retype(formal[i + 1].type(), inputs[i]) : inputs[i];
      r.inputs_desc += (r.inputs_desc.empty() ? "" : ", ") + (v.isTensor() ? Describe(v.toTensor()) : KindOf(v));
    }
  }
  try {
    if (!ran_once) out1 = Run(fresh.Fresh(), inputs);
    if (o.check_determinism && !ran_once) out2 = Run(fresh.Fresh(), inputs);
    if (o.check_determinism && fresh.cloned()) {
      // A second step of one copy: does forward change the model's state?
      torch::jit::Method stepped = fresh.Fresh();
      Run(stepped, inputs);
      ModelCheckResult steps;
      CompareRuns(out1, Run(stepped, inputs), steps);
      r.stateful = steps.deterministic == false;
    }
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kUsage) throw;
    r.run_error = std::string("running ") + o.method + " failed: " + e.what();
    return r;
  } catch (const std::exception& e) {
    r.run_error = std::string("running ") + o.method + " failed: " + FromTorch(e).what();
    return r;
  }
  r.ran = true;
  r.outputs = SummarizeOutputs(out1, "output");
  if (o.check_determinism) CompareRuns(out1, out2, r);
  if (have_reference) {
    Tolerances tol;
    tol.rtol = o.rtol;
    tol.atol = o.atol;
    CompareValues(out1, expected, "outputs", tol, r.reference);
    r.reference_compared = true;
  }
  if (!o.record_reference_path.empty()) {
    c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
    dict.insert("inputs", c10::ivalue::Tuple::create(inputs));
    dict.insert("outputs", out1);
    try {
      SaveValueFile(dict, o.record_reference_path);
      r.recorded = true;
    } catch (const Error&) {
      r.recorded = false;
    }
  }
  if (!o.save_outputs_path.empty()) {
    try {
      SaveValueFile(out1, o.save_outputs_path);
      r.outputs_saved = true;
    } catch (const Error&) {
      r.outputs_saved = false;
    }
  }
  return r;
}

}  // namespace tsctl
