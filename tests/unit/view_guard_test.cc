// The view guard's rules (lib/src/torch/view_guard.h), and the LibTorch
// behaviour they rest on: the views LibTorch derives itself refuse an
// overflowing argument, so only the operators that place a caller's view
// are guarded; _reshape_alias places one with no check at all.
#include <torch/torch.h>

#include "view_guard.h"

#undef CHECK
#include <catch2/catch.hpp>

namespace {
constexpr int64_t kElastic = 2305843009213675520;  // 4 * (this + 18432) wraps past 2^63
}

TEST_CASE("views LibTorch derives itself refuse an overflowing argument", "[torch][view_guard]") {
  const at::Tensor x = torch::arange(4, torch::kFloat);
  const int64_t h = kElastic;
  CHECK_THROWS(x.view({h, 4}));
  CHECK_THROWS(x.view({2 * h, 2}));
  CHECK_THROWS(x.reshape({2 * h, 2}));
  CHECK_THROWS(x.narrow(0, h, 1));
  CHECK_THROWS(x.narrow(0, 1, h));
  CHECK_THROWS(x.expand({h}));
  CHECK_THROWS(x.unfold(0, h, 1));
  CHECK_THROWS(x.select(0, h));
  CHECK_THROWS(x.unflatten(0, {h, 4}));
  // Where they clamp, the view stays inside the storage.
  CHECK(x.slice(0, h, h + 2).numel() == 0);
  CHECK(x.view({2, 2}).diagonal(h).numel() == 0);
  // as_strided checks in int64: refused within it, wrapped past it (what the guard is for).
  CHECK_THROWS(x.as_strided({8}, {1}, 0));
  CHECK_THROWS(x.as_strided({4}, {1}, h / 8));
}

TEST_CASE("_reshape_alias places a caller's view with no bounds check", "[torch][view_guard]") {
  const at::Tensor x = torch::zeros({4});
  // Only its metadata is read here: the view reaches 4 KiB past a 16-byte storage.
  at::Tensor y;
  REQUIRE_NOTHROW(y = at::_reshape_alias(x, {1024}, {1}));
  CHECK(y.numel() == 1024);
  CHECK(y.storage().nbytes() == 16);
  CHECK(!tsctl::ViewPastStorage({1024}, {1}, 0, 4, 16).empty());
}

TEST_CASE("the guard's rules, in arithmetic that cannot overflow", "[view_guard]") {
  using tsctl::ViewOutsideStorage;
  using tsctl::ViewPastStorage;
  // Elastic's call: past 2^63 once multiplied by the element size.
  CHECK(!ViewOutsideStorage({18432}, {1}, kElastic, 4, 16).empty());
  // A size x stride term past any address space.
  CHECK(!ViewOutsideStorage({2, 2}, {int64_t{1} << 62, 1}, 0, 4, 16).empty());
  CHECK(!ViewOutsideStorage({3}, {INT64_MAX}, INT64_MAX, 8, 16).empty());
  // Out of bounds within int64: LibTorch's own check refuses it.
  CHECK(ViewOutsideStorage({8}, {1}, 0, 4, 16).empty());
  CHECK(ViewOutsideStorage({4}, {-1}, 0, 4, 16).empty());
  // Honest views and empty ones.
  CHECK(ViewOutsideStorage({2, 2}, {1, 2}, 0, 4, 16).empty());
  CHECK(ViewOutsideStorage({0, 5}, {INT64_MAX, INT64_MAX}, kElastic, 4, 16).empty());
  // _reshape_alias checks nothing: any byte past the storage, or before it.
  CHECK(ViewPastStorage({4}, {1}, 0, 4, 16).empty());
  CHECK(ViewPastStorage({2, 2}, {2, 1}, 0, 4, 16).empty());
  CHECK(!ViewPastStorage({5}, {1}, 0, 4, 16).empty());
  CHECK(!ViewPastStorage({2}, {1}, 3, 4, 16).empty());
  CHECK(!ViewPastStorage({4}, {-1}, 0, 4, 16).empty());
  CHECK(!ViewPastStorage({2}, {INT64_MAX}, INT64_MAX, 8, 16).empty());
  CHECK(ViewPastStorage({0}, {1}, 1000, 4, 16).empty());
}
