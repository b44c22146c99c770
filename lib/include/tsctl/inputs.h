// Model input specifications ("1x3x224x224:float32") and where to find them
// when the command line gives none.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tsctl/archive.h"

namespace tsctl {

struct InputSpec {
  std::vector<int64_t> shape;
  std::string dtype = "float32";  // float32 float64 float16 bfloat16 int64 int32 int16 int8 uint8 bool
  bool channels_last = false;
  // How the values are filled: kRandom (normal floats, integers in [0, 10),
  // booleans), kZeros, kOnes, kRandint (integers in [low, high)), kConstant,
  // kUniform (floats uniform in [low, high)).
  enum class Fill { kRandom, kZeros, kOnes, kRandint, kConstant, kUniform } fill = Fill::kRandom;
  double low = 0, high = 10;  // kRandint, kUniform
  double value = 0;           // kConstant

  std::string ToString() const;  // parses back to the same spec
  uint64_t Bytes() const;        // elements times the element size
};

// Parses "1x3x224x224", "1x3x224x224:float32", "4:int64", "2x3:bool",
// "1x3x224x224:float16:channels_last", "scalar:int64" (shape []), with an
// optional fill after the dtype: ":zeros", ":ones", ":random",
// ":randint:LOW:HIGH", ":fill:VALUE", ":uniform:LOW:HIGH" (floating dtypes)
// ("1x16:int64:randint:0:1000", "2x2:float32:fill:0.5"). Throws
// tsctl::Error (kUsage) naming what is wrong.
// The one rule on where a run's arguments come from: given (--input/--arg)
// or loaded from a file (--load-inputs), not both. Throws tsctl::Error
// (kUsage) naming `given_flags` ("--input/--arg", or "--input" for trace).
void RequireOneInputSource(bool given, const std::string& load_inputs_path, const std::string& given_flags = "--input/--arg");
// The same for --data-loader-script, which is a third source: it takes
// neither --input/--arg nor --load-inputs beside it.
void RequireOneDataSource(bool given, const std::string& load_inputs_path);

InputSpec ParseInputSpec(const std::string& text);

// True for the floating dtypes a spec names (float16/32/64, bfloat16): the
// ones a uniform fill and a value range of reals apply to.
bool IsFloatingDtype(const std::string& dtype);

// One method argument from the command line (`--arg`): "NAME=VALUE" binds an
// argument by name, a bare "VALUE" takes the next position. VALUE is JSON-like
// and typed by the method's schema in the plugin: a tensor spec
// ("1x3x8x8:float32") or a nested number list for Tensor, 3, 0.5, true, null,
// "text" (or bare text) for str, [1, 2] for List/Tuple, {"a": 1} for Dict.
struct ArgSpec {
  std::string name;   // empty: positional
  std::string value;  // the text after '='
};

// Splits "NAME=VALUE" (NAME an identifier) from a positional "VALUE". Throws
// tsctl::Error (kUsage) for an empty value.
ArgSpec ParseArgSpec(const std::string& text);

// --val-range: the values generated tensors take, for one argument (by
// name) or for every argument (empty name), as Polygraphy's --val-range.
struct ValueRange {
  std::string name;  // empty: every tensor argument without a range of its own
  double low = 0, high = 1;
};

// Parses "[NAME:]LOW,HIGH", with or without brackets ("x:0,1", "x:[0,1]",
// "[-1,1]"); LOW <= HIGH, both finite. Throws tsctl::Error (kUsage), also
// for a name given twice.
std::vector<ValueRange> ParseValueRanges(const std::vector<std::string>& texts);

// A method's formal argument, as ApplyValueRanges needs it.
struct FormalArg {
  std::string name;
  bool holds_tensors = false;  // Tensor, or a container or Optional of tensors
};

// Binds `args` to `formals` (named ones by name, positional ones to the
// free slots in order) and rewrites every randomly filled tensor spec in an
// argument that holds tensors to the range given for it: floats uniform in
// [low, high) (":uniform:LOW:HIGH"), integers from low to high inclusive
// (":randint:LOW:HIGH+1"); booleans and explicit fills are kept. The
// rewritten specs pin the same values. Throws tsctl::Error (kUsage) for a
// range naming no argument of the method.
std::vector<ArgSpec> ApplyValueRanges(const std::vector<ArgSpec>& args, const std::vector<FormalArg>& formals,
                                      const std::vector<ValueRange>& ranges);

// The extra/ records tsctl writes and reads: an archive's example input
// specs (trace, script, export, stamp) and its recorded reference
// (validate --record-reference), by name under extra/, and by path.
inline constexpr char kInputsRecord[] = "tsctl_inputs.json";
inline constexpr char kReferenceRecord[] = "tsctl_reference.pt";
inline constexpr char kInputsRecordPath[] = "extra/tsctl_inputs.json";
inline constexpr char kReferenceRecordPath[] = "extra/tsctl_reference.pt";
// Beside the reference: where the inputs it was recorded on came from
// ({"input_source": "inferred" | "--input" | "extra/tsctl_inputs.json" | ...,
// "inputs": "1x3x224x224:float32"}), so that later runs can say whether
// the reference rests on the model's own inputs or on a guess.
inline constexpr char kReferenceOriginRecord[] = "tsctl_reference_inputs.json";
inline constexpr char kReferenceOriginRecordPath[] = "extra/tsctl_reference_inputs.json";

struct ArchiveInputs {
  std::vector<InputSpec> inputs;
  std::string source;  // "extra/tsctl_inputs.json", "traced_inputs.pkl"; empty if none
};

// Input specs stored in the archive for `method`: first extra/tsctl_inputs.json
// (written by tsctl trace / script: {"forward": ["1x3x8x8:float32"]}), then
// PyTorch's traced_inputs.pkl (shapes and dtypes of the example inputs a trace
// kept). Returns empty inputs if there are none.
ArchiveInputs InputsFromArchive(const Archive& archive, const std::string& method);

// The record extra/tsctl_reference.pt (validate --record-reference) when it
// holds the inputs it was recorded on ({"inputs": (...), "outputs": ...}),
// of any type; --load-inputs takes such a file. Empty when there is none.
inline constexpr const char* kRecordedReference = "extra/tsctl_reference.pt";
std::string RecordedInputs(const Archive& archive);
// What a later report says of those inputs' origin, from
// extra/tsctl_reference_inputs.json: "recorded on inferred inputs (a
// guess, not the model's own)", "recorded on inputs from --input", ...;
// empty when the record is absent or unreadable (references recorded
// before it existed).
std::string RecordedInputsOrigin(const Archive& archive);

}  // namespace tsctl
