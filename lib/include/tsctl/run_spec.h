// How a command runs a method in the LibTorch child: which method, on which
// inputs, on which device, within which limits. One struct, the base of
// every command's options that runs a model (validate, bench, trace, script,
// the LibTorch child's model check), so its fields are declared once, copied
// as one value, bound to flags once (apps/tsctl/run_flags.cc) and encoded once
// (torch_child_codec.cc). Where the inputs come from is decided in one place:
// ResolveInputs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tsctl/inputs.h"

namespace tsctl {

class Archive;
struct TempFile;

struct RunSpec {
  std::string method = "forward";          // -m/--method
  std::vector<InputSpec> inputs;           // --input: tensors, the first positions
  std::vector<ArgSpec> args;               // --arg: any type, typed by the method's schema (after `inputs`)
  std::string load_inputs_path;            // --load-inputs: torch.save of the argument tuple, .npy, .npz
  // --data-loader-script FILE.py[:FUNC]: its first argument set, run in the
  // embedded Python (in a child) and then loaded as with --load-inputs. A
  // caller that runs many archives runs it once and passes its file in
  // load_inputs_path beside it (ResolveInputs then takes that file).
  std::string data_loader;
  bool infer_inputs = true;                // false: --no-infer
  uint64_t seed = 0;                       // --seed: the generator of random input values
  std::vector<ValueRange> value_ranges;    // --val-range: the values generated tensors take
  // --device: cpu, cuda, cuda:N. Inputs are made on the CPU and moved there;
  // outputs come back to the CPU.
  std::string device = "cpu";
  std::string quantized_engine;            // --quantized-engine (empty: LibTorch's default)
  std::vector<std::string> load_libraries; // --load-library, TSCTL_LOAD_LIBRARIES: loaded before the archive
  double timeout_seconds = 300;            // --timeout: the child is killed after this long
  // --memory-limit: how far the child may grow past what it inherited
  // (RLIMIT_DATA; not with a CUDA device); 0: min(8 GiB, half of the machine's memory).
  uint64_t memory_limit_bytes = 0;
  // --max-output-size: the largest file a child may send back (outputs,
  // references, traces); 0: what its memory cap allows.
  uint64_t max_output_bytes = 0;
};

// What every make (trace, script, export: tsctl/torch_backend.h's
// MakeRequest and what it becomes, TraceOptions, ScriptOptions and the
// Python child's request) shares, copied as one: the run, the check inputs,
// --freeze, the tolerances and the output.
struct MakeSpec : RunSpec {
  std::vector<std::vector<InputSpec>> check_inputs;  // --check-input: each one input set
  bool freeze = false;
  double rtol = 1e-5;
  double atol = 1e-6;
  std::string output;
};

// Where a run's arguments come from, first that applies:
enum class InputOrigin {
  kGiven,       // --input / --arg
  kLoaded,      // --load-inputs FILE
  kDataLoader,  // --data-loader-script: its first item, in a file
  kReference,   // validate --reference FILE: the inputs the reference holds
  kRecorded,    // extra/tsctl_reference.pt: the inputs the archive's recorded reference was run on
  kSample,      // a .pt2's data/sample_inputs/MODEL.pt (torch.export's example inputs)
  kStored,      // extra/tsctl_inputs.json, traced_inputs.pkl: specs the archive keeps
  kInferred,    // none kept: the child looks (bundled inputs, then candidates from the method and its weights),
                // or for a .pt2 the graph signature's shapes
  kNone,        // none kept and --no-infer
};

// "given", "loaded", "data loader", "reference", "recorded", "sample", "stored", "inferred", "none".
const char* InputOriginName(InputOrigin origin);

struct ResolvedInputs {
  InputOrigin origin = InputOrigin::kNone;
  std::vector<InputSpec> inputs;  // kGiven, kStored
  std::vector<ArgSpec> args;      // kGiven, kInferred from a .pt2's signature
  // kLoaded, kDataLoader, kRecorded, kSample: a file the child loads the
  // argument tuple from (kRecorded: the whole {"inputs", "outputs"} record).
  std::string file;
  std::shared_ptr<TempFile> temp;  // owns `file` when tsctl wrote it
  // The report's words: "--input", "--arg", "--input/--arg", the file,
  // "--data-loader-script F.py", "extra/tsctl_reference.pt",
  // "extra/tsctl_inputs.json", "inferred ...".
  std::string source;
};

// What else ResolveInputs needs to know about the run.
struct ResolveContext {
  std::string reference_path = {};  // validate --reference FILE: its inputs come before anything the archive keeps
  // The key the archive's records are kept under: the method for
  // TorchScript ("all": none, every method is inferred), the model's name
  // for a .pt2 ("model" of models/model.json).
  std::string key = {};
  bool pt2 = false;  // a .pt2: data/sample_inputs/KEY.pt and the signature's guess apply
  std::vector<ArgSpec> pt2_guess = {};  // a .pt2's inputs read from its graph signature (Pt2RunSpec::guess)
  std::string pt2_guess_note = {};
};

// The one rule on where a run's arguments come from (the order of
// InputOrigin). Given and loaded inputs are never mixed (RequireOneInputSource);
// a data loader runs here, in a child. The archive is read, never loaded:
// kInferred means the LibTorch child looks. Throws tsctl::Error (kUsage)
// for conflicting sources.
ResolvedInputs ResolveInputs(const Archive& archive, const RunSpec& spec, const ResolveContext& context);

}  // namespace tsctl
