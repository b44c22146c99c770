// tsctl bench --shapes NAME:MIN,OPT,MAX: one benchmark per point of a range
// of input shapes (trtexec's --minShapes/--optShapes/--maxShapes).
#include <set>

#include "tsctl/bench.h"
#include "tsctl/error.h"
#include "tsctl/inputs.h"
#include "tsctl/text_util.h"
#include "tsctl/torch_backend.h"

namespace tsctl {

ShapeRange ParseShapeRange(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::kUsage, "--shapes '" + text + "': " + why +
                                        " (expected NAME:MIN,OPT,MAX, e.g. x:1x3x224x224,8x3x224x224,32x3x224x224)");
  };
  const size_t colon = text.find(':');
  if (colon == std::string::npos || !IsIdentifier(text.substr(0, colon))) throw bad("no argument name before ':'");
  ShapeRange r;
  r.name = text.substr(0, colon);
  std::vector<std::string> parts;
  std::string rest = text.substr(colon + 1), cur;
  for (char c : rest + ",") {
    if (c == ',') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (parts.size() != 3) throw bad("give three shapes, min, opt and max, separated by commas");
  for (const std::string& p : parts) r.specs.push_back(ParseInputSpec(p));
  // A dtype or fill given on the first applies to all three, unless another is given there.
  for (size_t i = 1; i < 3; ++i) {
    if (parts[i].find(':') == std::string::npos) {
      std::vector<int64_t> shape = r.specs[i].shape;
      r.specs[i] = r.specs[0];
      r.specs[i].shape = shape;
    }
  }
  for (const InputSpec& s : r.specs) {
    if (s.shape.size() != r.specs[0].shape.size()) throw bad("the three shapes must have the same rank");
  }
  return r;
}

std::vector<ShapePoint> BenchShapes(BenchOptions options, const std::vector<ShapeRange>& ranges,
                                    const std::function<void(size_t done, size_t total)>& progress) {
  if (!options.load_inputs_path.empty()) throw Error(ErrorKind::kUsage, "--shapes cannot be combined with --load-inputs");
  if (!options.data_loader.empty()) throw Error(ErrorKind::kUsage, "--shapes cannot be combined with --data-loader-script");
  if (!options.save_outputs_path.empty()) throw Error(ErrorKind::kUsage, "--shapes cannot be combined with --save-outputs");
  std::set<std::string> names;
  for (const ShapeRange& r : ranges) {
    if (!names.insert(r.name).second) throw Error(ErrorKind::kUsage, "--shapes names '" + r.name + "' twice");
  }
  for (const ArgSpec& a : options.args) {
    if (names.count(a.name)) throw Error(ErrorKind::kUsage, "--shapes and --arg both give '" + a.name + "'");
  }
  static const char* const kPoints[] = {"min", "opt", "max"};
  std::vector<ShapePoint> out;
  for (size_t k = 0; k < 3; ++k) {
    ShapePoint p;
    p.point = kPoints[k];
    for (const ShapeRange& r : ranges) p.args.push_back({r.name, r.specs[k].ToString()});
    BenchOptions o = options;
    o.args.insert(o.args.end(), p.args.begin(), p.args.end());
    o.input_source = "--shapes (" + p.point + ")";
    try {
      p.result = Bench(o);
      p.ok = true;
    } catch (const Error& e) {
      // Only LibTorch's refusal of a point's shape is that point's; a usage,
      // I/O (an interrupt too) or format error is the same at every point:
      // once, as the command's.
      if (e.kind() != ErrorKind::kTorch) throw;
      p.error = e.what();
    }
    out.push_back(std::move(p));
    if (progress) progress(k + 1, 3);
  }
  return out;
}

}  // namespace tsctl
