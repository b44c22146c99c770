// The JSON renderers as nlohmann values, private to libtsctl and its unit
// tests. The public headers declare their text (RenderJson and its kin,
// DumpJson of these), so that the API carries no JSON library.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tsctl/bench.h"
#include "tsctl/diff.h"
#include "tsctl/inspect.h"
#include "tsctl/stamp.h"
#include "tsctl/torch_backend.h"
#include "tsctl/validate.h"

namespace tsctl {

// Every string from an archive is made valid UTF-8 only when dumped
// (DumpJson, lib/src/text/json_util.h).
nlohmann::json ToJson(const ArchiveInfo& info);
nlohmann::json ToJson(const DiffResult& result);
nlohmann::json ToJson(const StampResult& result);
nlohmann::json StampShowToJson(const ArchiveInfo& info);
nlohmann::json ToJson(const ValidationReport& report);
// Beside each display string of validate's model details ("desc": "Float[1,
// 10]", an input's "value": "1x3x8x8:float32"), its structured dtype and
// shape: an output's from the tensor the child described (its "tensor",
// which the report does not repeat), an argument's from its spec; `model`
// is one method's details or an array of them (render_validate.cc).
void AddTensorTypes(nlohmann::json& model);
// What confines LibTorch children on this machine, as validate's and bench's
// reports say it: {"on", "seccomp", "landlock_abi", "layers"}; "on" false
// under --no-sandbox, a layer the kernel lacks false or 0.
nlohmann::json SandboxJson();
nlohmann::json ToJson(const BenchResult& r, const std::vector<double>& percentiles);
nlohmann::json ShapesJson(const std::vector<ShapePoint>& points, const std::vector<double>& percentiles);
nlohmann::json SweepJson(const std::vector<SweepRow>& rows);
nlohmann::json ToJson(const MakeResult& result);
nlohmann::json GraphToJson(const GraphOptions& options, const std::string& graph);
nlohmann::json CodeToJson(const std::string& path, const std::string& compiled_method, const std::string& code);

}  // namespace tsctl
