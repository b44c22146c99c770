// Views a caller places on an existing storage by its own sizes, strides
// and storage offset: the operators of native_functions.yaml (LibTorch 1.13
// and 2.x) that take a storage_offset with sizes and strides and build a
// view on another tensor's or a given storage's memory (ViewGuardedOperators()).
// LibTorch checks such a view against its storage, but 1.13 computes
// itemsize * (storage_offset + extent) in int64 without an overflow check:
// an offset such as 2305843009213675520 on float32 wraps the product past
// 2^63 and the view reads (or writes) the process's heap. Views that
// LibTorch derives itself (view, narrow, expand, select, unfold, slicing)
// check their own bounds and are not guarded.
//
// Two layers, both in 128-bit arithmetic that cannot overflow:
//  - statically, on the graphs LibTorch resolved: a call whose sizes,
//    strides and offset are constants and whose view ends past 2^57
//    elements (more bytes than any address space holds) is a torch.unsafe
//    finding (UnsafeViewCalls), so the method is never run;
//  - at run time: a RecordFunction callback on every guarded call computes
//    the view's last byte and, where it lies past 2^63 (ViewOutsideStorage),
//    ends the child with the finding before the kernel runs (a callback's
//    exception would only be a warning to LibTorch: the op would run).
// Private to the LibTorch plugin.
#pragma once

#include <torch/script.h>

#include <string>
#include <vector>

namespace tsctl {

// The guarded operators' names ("aten::as_strided", ...).
const std::vector<std::string>& ViewGuardedOperators();

// Arms the run-time guard in this process (a LibTorch child): before an
// archive loads, since its __setstate__ runs while it loads. Idempotent.
void ArmViewGuard();
// After a module loaded: the guard stays armed only if one of its graphs
// calls a guarded operator (or TSCTL_VIEW_GUARD=always, to measure what it
// costs); else it is removed, and runs cost nothing more. Views the
// kernels make inside other operators are their own, sound ones.
void KeepViewGuardIfCalled(const torch::jit::Module& module);

// One line per call of a guarded operator whose constant sizes, strides and
// offset place a view no storage can hold: "forward calls aten::as_strided
// with sizes [18432], strides [1] and storage offset 2305843009213675520
// (code/__torch__/m.py:7): ...".
std::vector<std::string> UnsafeViewCalls(const torch::jit::Module& module);

// The run-time rule: "" unless the view of `sizes`, `strides` and `offset`
// (in elements of `itemsize` bytes) ends past byte 2^63, where LibTorch
// 1.13's int64 check wraps around; else why, naming `storage_bytes`. A view
// that is out of bounds within int64 is LibTorch's own to refuse (as_strided
// does; set_ grows a resizable storage), so an honest model on a wrong
// guess still gets LibTorch's error, not a finding.
std::string ViewOutsideStorage(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset,
                               uint64_t itemsize, uint64_t storage_bytes);

// The rule for operators that check nothing (_reshape_alias): "" unless the
// view starts before the storage or ends past its `storage_bytes`; else why.
std::string ViewPastStorage(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset,
                            uint64_t itemsize, uint64_t storage_bytes);

}  // namespace tsctl
