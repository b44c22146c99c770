// inspect's module tree of a legacy archive (PyTorch 1.0/1.1): model.json
// describes the modules and their tensors (records under tensors/).
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "inspect_internal.h"
#include "tsctl/dtype.h"
#include "../archive/json_input.h"

namespace tsctl::inspect_internal {
namespace {

// A legacy model.json dataType ("FLOAT"): tsctl/dtype.h's legacy column.
const DtypeInfo* LegacyDtype(const std::string& data_type) {
  for (const DtypeInfo& d : AllDtypes()) {
    if (*d.legacy && data_type == d.legacy) return &d;
  }
  return nullptr;
}

}  // namespace

void ReadLegacyModule(const Archive& a, ArchiveInfo& info) {
  nlohmann::json model;
  try {
    model = ParseJsonInput(a.Read("model.json"), "model.json");
  } catch (const std::exception& e) {
    info.warnings.push_back(e.what());
    return;
  }
  info.format.producer_name = model.value("producerName", "");
  info.format.producer_version = model.value("producerVersion", "");
  if (model.contains("protoVersion") && !info.format.version) {
    try { info.format.version = std::stoll(model["protoVersion"].get<std::string>()); } catch (...) {}
  }
  const nlohmann::json tensors = model.value("tensors", nlohmann::json::array());
  auto tensor_at = [&](const std::string& id, const std::string& name, const std::string& role) {
    TensorInfo t;
    t.name = name;
    t.role = role;
    size_t idx = 0;
    try { idx = std::stoul(id); } catch (...) { return t; }
    if (idx >= tensors.size()) return t;
    const nlohmann::json& j = tensors[idx];
    const DtypeInfo* dt = LegacyDtype(j.value("dataType", ""));
    t.dtype = dt ? dt->name : j.value("dataType", "");
    for (const auto& d : j.value("dims", nlohmann::json::array())) t.shape.push_back(std::stoll(d.get<std::string>()));
    for (const auto& d : j.value("strides", nlohmann::json::array())) t.stride.push_back(std::stoll(d.get<std::string>()));
    try { t.storage_offset = std::stoll(j.value("offset", "0")); } catch (...) {}
    t.storage_key = j.contains("data") ? j["data"].value("key", "") : "";
    t.device = j.value("device", "cpu");
    t.requires_grad = j.value("requiresGrad", false);
    t.numel = Numel(t.shape);
    t.bytes = t.numel * (dt ? dt->size : 0);
    return t;
  };
  std::function<void(const nlohmann::json&, ModuleInfo&, const std::string&)> fill =
      [&](const nlohmann::json& j, ModuleInfo& m, const std::string& path) {
        m.name = j.value("name", "");
        m.path = path;
        m.type = "(legacy module)";
        if (j.contains("torchscriptArena") && j["torchscriptArena"].is_object()) {
          const nlohmann::json& key = j["torchscriptArena"].value("key", nlohmann::json());
          if (key.is_string()) m.code_record = key.get<std::string>();
        }
        auto join = [&](const std::string& n) { return path.empty() ? n : path + "." + n; };
        for (const auto& p : j.value("parameters", nlohmann::json::array())) {
          m.tensors.push_back(tensor_at(p.value("tensorId", ""), join(p.value("name", "")),
                                        p.value("isBuffer", false) ? "buffer" : "parameter"));
        }
        for (const auto& at : j.value("attributes", nlohmann::json::array())) {
          if (at.value("type", "") == "Tensor") {
            m.tensors.push_back(tensor_at(at.value("id", ""), join(at.value("name", "")), "attribute"));
          } else {
            m.attributes.push_back({at.value("name", ""), at.value("type", ""), at.value("id", "")});
          }
        }
        for (const auto& sub : j.value("submodules", nlohmann::json::array())) {
          ModuleInfo child;
          fill(sub, child, join(sub.value("name", "")));
          m.children.push_back(std::move(child));
        }
      };
  ModuleInfo root;
  fill(model.value("mainModule", nlohmann::json::object()), root, "");
  root.name.clear();
  info.module = std::move(root);
}

}  // namespace tsctl::inspect_internal
