// The structured `dtype` and `shape` fields the JSON reports give beside a
// tensor's display string. Not a public interface.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tsctl/tensor_desc.h"

namespace tsctl {

// Sets j["dtype"] and j["shape"] from the tensor the LibTorch child
// described (typed, never read back from a printed description); both null
// when there is none.
void AddTensorDesc(nlohmann::json& j, const std::optional<TensorDesc>& tensor);

// An argument as the command line gave it (validate's `--arg x=VALUE`): the
// tensor an input spec makes ("1x3x224x224:float32", "scalar:int64", fills
// and channels_last allowed; "2x3" is float32; a bare "3" is an int, not a
// shape), by tsctl's own spec grammar (ParseInputSpec); nullopt otherwise.
std::optional<TensorDesc> SpecTensor(const std::string& value);

}  // namespace tsctl
