// The LibTorch half of `tsctl validate`, one model check phase by phase:
// load, reference, inputs (given, loaded, stored or inferred), runs and
// comparisons, files. Each phase that ends the check early says why in the
// result and returns false. check_model.cc holds the loading, reference and
// run phases, check_model_inputs.cc the inputs. Private to those files.
#pragma once

#include <torch/script.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "arguments.h"
#include "check_model.h"
#include "infer_inputs.h"
#include "intermediates.h"
#include "refine_inputs.h"
#include "model_runs.h"
#include "module_state.h"

namespace tsctl {

class ModelChecker {
 public:
  explicit ModelChecker(const ModelCheckOptions& o) : o_(o), fault_(std::getenv("TSCTL_FAULT_CHECK_MODEL")) {}

  ModelCheckResult Check();

 private:
  using Clock = std::chrono::steady_clock;

  bool Fault(const char* name) const { return fault_ && std::string(fault_) == name; }
  const c10::FunctionSchema& Schema() const { return method_->function().getSchema(); }

  // The --val-range entries for this method. Under validate -m all a named
  // range is meant for the methods that have that argument: the others run
  // without it, and a name that no method of the module takes is refused
  // (kUsage), as one naming no argument of the one method is.
  std::vector<ValueRange> Ranges() const;
  // The flags that pin `args` on the command line.
  std::string PinFlags(const std::vector<ArgSpec>& args) const;

  // The lite interpreter (when asked), torch::jit::load, the methods, the
  // operators and the method asked for.
  bool Load();

  // This run's intermediate values (what was left out goes to
  // intermediates_note_). Throws what running throws: a recording then holds
  // none, and the model compared with it says so.
  std::vector<Intermediate> OwnIntermediates();

  // --compare-intermediates, on this archive's side.
  void CompareWithReferenceIntermediates();

  // --reference FILE, or the archive's extra/tsctl_reference.pt.
  bool ReadReference();

  // extra/tsctl_reference.pt, read from memory.
  void ReadStoredReference();

  // Inputs from the first source that has them: given, loaded, the
  // reference's, bundled; none needed for a method without arguments.
  bool GivenInputs();

  // The reference holds inputs and this run took others that differ (shape
  // or values): no comparison (have_reference_ false), r_.reference_skipped
  // says why.
  void SkipReferenceOnOtherInputs();

  // A candidate that ran, kept in case none runs cleanly.
  struct Kept {
    std::vector<c10::IValue> values;
    c10::IValue out1, out2;
    InputCandidate c;
    std::string why;
  };

  // Takes `values` (the candidate `c`'s) and its outputs as the check's.
  void Take(std::vector<c10::IValue> values, c10::IValue a, c10::IValue b, const InputCandidate& c);

  // Runs one candidate (twice with the determinism check, each from the
  // loaded state). True if it ran cleanly and was taken; else its outcome is
  // in r_.candidates, `suspect` keeps the first that ran, `error` LibTorch's
  // message if it raised, or the unpacked operator's for a run that went
  // through a prepacked one its weights contradict (`contradicted` set).
  bool TryCandidate(const InputCandidate& c, const std::string& flags, std::optional<Kept>& suspect, std::string& error,
                    bool& contradicted);

  // A candidate that raised: its flags, LibTorch's error, the flags of the
  // candidate that error asks for (RefineFromError; empty if none), and how
  // many refinements led to it.
  struct Lead {
    std::string flags, error, next_flags;
    int depth = 0;
  };
  // The lead whose error explains the most (nullptr if none), for the WARN
  // when no candidate ran; `tried` are the flags of the candidates tried.
  static const Lead* MostInformative(const std::vector<Lead>& leads, const std::set<std::string>& tried);
  // r_.run_skipped when no candidate ran: the error that explains the most,
  // and the --arg it asks for if that was never tried (`steps_spent`: the
  // refinement steps ran out).
  void DescribeNoneRan(const std::vector<Lead>& leads, const std::set<std::string>& tried, bool steps_spent);

  // Inferred inputs. Each candidate is a guess: one that raises, gives
  // NaN/Inf, differs between two runs or feeds a prepacked operator a tensor
  // its weights contradict is set aside (with why) and the next tried (after
  // a contradiction, first what it asks for, read as the unpacked operator's
  // error). If none runs cleanly, the first that ran is kept and
  // r_.guess_suspect says what was wrong: validate then warns, since the
  // guess, not the archive, may be at fault. A candidate that raises is
  // followed by what LibTorch's error for it says to try next
  // (RefineFromError), at most kRefinements times. `base` is the inferred
  // candidate a queued one comes from: what the progress line and
  // skip_candidates count.
  bool TryCandidates();

  // What the inputs were, for the report: the specs and the flags that pin
  // them, or each loaded value's shape and type.
  void DescribeInputs();

  // torch.stateful's search of the method's graph (ModelCheckOptions::calls
  // set): r_.state_writes, with `saved_training` the flags as saved.
  void SearchStateWrites(const TrainingFlags& saved_training);

  // The calls on one copy after its first (`copy`, with its state `before`
  // and `after_first` the first call; a new copy, called once here, when
  // unset): what they changed of its state, and whether the last call's
  // outputs differ from the first's. Returns the last call's outputs.
  c10::IValue StepCalls(std::optional<torch::jit::Method>& copy, std::optional<StateSnapshot>& before,
                        std::optional<StateSnapshot>& after_first);

  // The runs (each from the loaded state), whether the model is stateful,
  // determinism and the reference (the first call's and, when they differ,
  // the last call's on one copy).
  bool RunAndCompare();

  const ModelCheckOptions& o_;
  const char* fault_;
  ModelCheckResult r_;
  torch::Device device_ = torch::Device(torch::kCPU);
  torch::jit::Module module_;
  torch::jit::ExtraFilesMap extra_;
  std::optional<torch::jit::Method> method_;
  // Each method's size once inlined (InlinedNodes), counted in Load.
  std::map<std::string, uint64_t> inlined_nodes_;
  std::optional<FreshCopies> fresh_;
  // The graphs call XNNPACK's prepacked operators, which skip the shape
  // checks of the operators they replace: runs are watched (PackedOpChecks).
  bool prepacked_ = false;
  // The method applies an elementwise operator to a stored tensor: inferred
  // candidates are watched for a column broadcast against its feature.
  bool stored_elementwise_ = false;
  // The reference.
  std::vector<c10::IValue> ref_inputs_;
  bool ref_has_inputs_ = false;
  bool inputs_from_reference_ = false;  // the run takes the reference's inputs
  c10::IValue expected_;
  bool have_reference_ = false;
  std::vector<Intermediate> ref_intermediates_;  // --compare-intermediates: the reference model's
  std::string intermediates_note_;
  // The inputs and the two runs' outputs.
  std::vector<c10::IValue> inputs_;
  bool have_inputs_ = false;
  std::vector<ArgSpec> used_args_;
  c10::IValue out1_, out2_;
  bool ran_once_ = false;
};

}  // namespace tsctl
