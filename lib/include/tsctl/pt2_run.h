// What running a .pt2 in the LibTorch plugin needs besides its path, read
// from the archive without LibTorch: which runner (an AOTInductor package's
// AOTIModelPackageLoader, or an exported program's), the model's name, its
// user inputs, and inputs inferred from the archive when none are given.
#pragma once

#include <string>
#include <vector>

#include "tsctl/inputs.h"

namespace tsctl {

struct Pt2RunSpec {
  enum class Kind {
    kNone,     // not a .pt2: a TorchScript archive
    kAoti,     // an AOTInductor package (data/aotinductor/<model>/)
    kProgram,  // an exported program (models/<model>.json)
  } kind = Kind::kNone;
  std::string model = "model";  // the folder under data/aotinductor/, or models/<model>.json
  // The user inputs, in order: the program's names where the archive has
  // its signature, else input0, input1, ... (every AOTInductor input is a
  // tensor).
  std::vector<std::string> input_names;
  std::vector<std::string> input_types;  // TorchScript type names: "Tensor", "int", "float", "bool"
  // Inputs inferred from the archive (empty: none), and from where.
  std::vector<ArgSpec> guess;
  std::string guess_note;
  // Why no inputs could be inferred ("" when `guess` is set or none are needed).
  std::string guess_missing;
  // A file with the package's sample inputs (data/sample_inputs/<model>.pt,
  // copied out by the caller; "" if none): used when no inputs are given,
  // loaded or in the reference, before the guess.
  std::string sample_inputs_path;

  // "forward(Tensor x, Tensor idx)": the signature as a schema, for messages
  // and for typing --arg values.
  std::string Schema() const;
};

// What AOTInductor's generated wrapper source checks of each input (its
// check_input_N functions: dtype, static sizes, bounds of dynamic sizes), as
// one tensor spec per input ("2x6:float32"): a dynamic size takes its lower
// bound (at least 1), else its upper bound if below 2, else 2. Empty if
// the source holds no such checks (a layout this tsctl does not know).
std::vector<std::string> AotiInputSpecs(const std::string& wrapper_source);

}  // namespace tsctl
