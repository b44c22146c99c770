// FindExampleInputs: the tensors a tracer or the converter is given.
#include "example_inputs.h"

#include "check_before_load.h"
#include "tsctl/error.h"
#include "find_inputs.h"

namespace tsctl {
namespace {

// The inferred arguments as tensor specs, or a usage error naming them.
std::vector<InputSpec> InferredTensors(const FoundInputs& found) {
  std::vector<InputSpec> out;
  for (const ArgSpec& a : found.args) {
    try {
      out.push_back(ParseInputSpec(a.value));
    } catch (const Error&) {
      throw Error(ErrorKind::kUsage, "inferred inputs are not all tensors (" + DescribeFound(found) +
                                         "): give tensor --input specs or --load-inputs");
    }
  }
  return out;
}

}  // namespace

ExampleInputs FindExampleInputs(const Archive& archive, const std::string& path, const RunSpec& spec,
                                const std::string& work) {
  RequireOneInputSource(!spec.inputs.empty(), spec.load_inputs_path, "--input");
  ExampleInputs e;
  e.resolved = ResolveInputs(archive, spec, {.key = spec.method});
  ResolvedInputs& in = e.resolved;
  std::string found_note;
  switch (in.origin) {
    case InputOrigin::kGiven: e.inputs = spec.inputs; break;
    case InputOrigin::kLoaded: e.load_inputs_path = spec.load_inputs_path; break;
    case InputOrigin::kStored: e.inputs = in.inputs; break;
    case InputOrigin::kRecorded:
    case InputOrigin::kDataLoader: e.load_inputs_path = in.file; break;
    case InputOrigin::kInferred: {
      FoundInputs found = FindInputs(path, spec, nullptr, CheckedLoadPath(archive));
      if (!found.found && !found.why.empty()) throw Error(ErrorKind::kUsage, work + " needs example inputs: " + found.why);
      if (found.found) {
        in.source = found.source;
        found_note = found.note;
      }
      e.inputs = InferredTensors(found);
      break;
    }
    case InputOrigin::kSample:
    case InputOrigin::kReference:
    case InputOrigin::kNone: break;
  }
  e.source = in.source;
  if (in.origin == InputOrigin::kRecorded) {
    e.note = "inputs from " + in.source;
  } else if (in.origin == InputOrigin::kStored || (in.origin == InputOrigin::kInferred && !e.inputs.empty())) {
    std::string pin;
    for (const InputSpec& i : e.inputs) pin += " --input " + i.ToString();
    e.note = "inputs from " + in.source + (found_note.empty() ? "" : " (" + found_note + ")") +
             (pin.empty() ? "" : "; pin them with" + pin);
  }
  return e;
}

}  // namespace tsctl
