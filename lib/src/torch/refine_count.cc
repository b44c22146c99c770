// A count that must match, solved from the candidates tried so far. A
// flattened feature map before a linear layer (or a broadcast against
// anchors, a view of the map) has C * f(H) * g(W) elements, where f and g
// are affine in the input's height and width, give or take the floors of
// strides and pools: convolutions, pools and strides shrink each dimension
// by an affine map. So over an image's height and width the count is
// bilinear, p*H*W + q*H + r*W + s, and over a signal's length affine. The
// errors of earlier candidates (same wanted count, same argument, other
// sizes) are points of that function: with enough of them the sizes that
// give the wanted count are solved for, exactly where integer sizes give
// it; with too few, the next candidate is a probe that changes one size.
// An image's area is first scaled twice by AreaScale (common input sizes
// among its guesses), then solved here. Also: a view's sizes grouped back
// into the argument's rank (GroupedShape).
#include "refine_rules.h"

#include <array>
#include <cmath>
#include <functional>
#include <set>
#include <tuple>

namespace tsctl::refine {
namespace {

struct Point {
  int64_t h = 1, w = 0;  // the sizes varied (h = 1 for a signal)
  int64_t got = 0;
};

// An earlier candidate's sizes `p`, with the count its `error` names if it
// wanted the same count, among `points` (once); its sizes among `tried`.
void AddPoint(const Point& p, const std::string& error, int64_t want, std::vector<Point>& points,
              std::set<std::pair<int64_t, int64_t>>& tried) {
  tried.insert({p.h, p.w});
  const auto then = CountMismatch(error);
  if (!then || then->second != want) return;
  if (std::none_of(points.begin(), points.end(), [&](const Point& q) { return q.h == p.h && q.w == p.w; })) {
    points.push_back({p.h, p.w, then->first});
  }
}

// Solves the 4x4 system a x = b by elimination with partial pivoting;
// false if it is singular.
bool Solve4(std::array<std::array<double, 5>, 4> a, std::array<double, 4>& x) {
  for (size_t c = 0; c < 4; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < 4; ++r) {
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    }
    if (std::abs(a[pivot][c]) < 1e-9) return false;
    std::swap(a[c], a[pivot]);
    for (size_t r = 0; r < 4; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (size_t k = c; k < 5; ++k) a[r][k] -= f * a[c][k];
    }
  }
  for (size_t c = 0; c < 4; ++c) x[c] = a[c][4] / a[c][c];
  return true;
}

// Of the integer sizes the fitted count gives `want` at, the one whose
// aspect is nearest the first candidate's, not tried yet; nullopt if none.
std::optional<std::pair<int64_t, int64_t>> Solutions(const std::array<double, 4>& f, int64_t want, double aspect,
                                                     const std::set<std::pair<int64_t, int64_t>>& tried) {
  const auto [p, q, r, s] = f;
  std::optional<std::pair<int64_t, int64_t>> best;
  double best_miss = 0;
  for (int64_t h = 1; h <= 4096; ++h) {
    const double d = p * static_cast<double>(h) + r;
    if (std::abs(d) < 1e-9) continue;
    const double w = (static_cast<double>(want) - q * static_cast<double>(h) - s) / d;
    const auto wi = static_cast<int64_t>(std::llround(w));
    if (wi < 1 || wi > 8192 || std::abs(w - static_cast<double>(wi)) > 1e-6 * (1 + std::abs(w))) continue;
    if (tried.count({h, wi})) continue;
    const double miss = std::abs(std::log(static_cast<double>(wi) / static_cast<double>(h) / aspect));
    if (!best || miss < best_miss) {
      best = std::pair{h, wi};
      best_miss = miss;
    }
  }
  return best;
}

}  // namespace

// `target`'s sizes grouped, in order, into `rank` sizes (each the product
// of consecutive ones): the grouping whose leading size is the target's
// first (a batch), whose last two are most nearly equal (an image's height
// and width; equal first), then whose channels are fewest. nullopt when no
// grouping keeps the batch or the best is not within 2:1 (not an image).
std::optional<Shape> GroupedShape(const Shape& target, size_t rank) {
  const size_t n = target.size();
  if (rank < 2 || rank >= n || n > 10) return std::nullopt;
  std::optional<Shape> best;
  std::tuple<double, int64_t> best_score{0, 0};
  // cuts[k]: where group k+1 starts; every choice of rank-1 cuts in 1..n-1.
  std::vector<size_t> cuts(rank - 1);
  std::function<void(size_t, size_t)> choose = [&](size_t k, size_t from) {
    if (k == cuts.size()) {
      Shape g;
      size_t at = 0;
      for (size_t c = 0; c <= cuts.size(); ++c) {
        const size_t end = c < cuts.size() ? cuts[c] : n;
        g.push_back(Numel(Shape(target.begin() + static_cast<long>(at), target.begin() + static_cast<long>(end))));
        at = end;
      }
      if (g[0] != target[0]) return;
      const double a = static_cast<double>(g[rank - 2]), b = static_cast<double>(g[rank - 1]);
      const std::tuple<double, int64_t> score{std::abs(std::log(a / b)), rank > 2 ? g[1] : 0};
      if (!best || score < best_score) {
        best = g;
        best_score = score;
      }
      return;
    }
    for (size_t c = from; c + (cuts.size() - k) <= n; ++c) {
      cuts[k] = c;
      choose(k + 1, c + 1);
    }
  };
  choose(0, 1);
  // Read as an image only where height and width are within 2:1.
  if (best && std::get<0>(best_score) > std::log(2.0) + 1e-9) return std::nullopt;
  return best;
}

std::optional<Refinement> CountSolve(const Tensors& t, const std::string& e, const std::vector<Attempt>& earlier) {
  const auto now = CountMismatch(e);
  if (!now || earlier.empty()) return std::nullopt;
  const auto [got, want] = *now;
  if (got < 1 || want < 1 || got == want) return std::nullopt;
  // A size no argument has: else a rule that changes that size applies.
  if (t.Find([&](const InputSpec& s) { return std::count(s.shape.begin(), s.shape.end(), got) > 0; })) return std::nullopt;
  auto i = t.Find([](const InputSpec& s) { return IsFloatingDtype(s.dtype) && s.shape.size() >= 2 && s.shape.size() <= 5; });
  if (!i) return std::nullopt;
  const InputSpec cur = *t.specs[*i];
  // The sizes varied: one length, or an image's height and width.
  const std::vector<size_t> dims = SpatialDims(cur.shape, got, want);
  const bool length = dims.size() == 1;
  auto point = [&](const Shape& s, int64_t g) { return length ? Point{1, s[dims[0]], g} : Point{s[dims[0]], s[dims[1]], g}; };
  auto same_but = [&](const Shape& other) {
    if (other.size() != cur.shape.size()) return false;
    for (size_t d = 0; d < other.size(); ++d) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end() && other[d] != cur.shape[d]) return false;
    }
    return true;
  };
  // The points: this candidate's, then the earlier ones of the same wanted
  // count whose argument differs only in the sizes varied, newest first.
  std::vector<Point> points = {point(cur.shape, got)};
  std::set<std::pair<int64_t, int64_t>> tried = {{points[0].h, points[0].w}};
  for (auto a = earlier.rbegin(); a != earlier.rend(); ++a) {
    const Tensors before(a->args);
    if (*i >= before.specs.size() || !before.specs[*i] || !same_but(before.specs[*i]->shape)) continue;
    AddPoint(point(before.specs[*i]->shape, 0), a->error, want, points, tried);
  }
  // An image's sizes: the area is scaled twice first (AreaScale: the
  // common input sizes detectors' anchors fix are among its guesses).
  if (points.size() < (length ? 2u : 3u)) return std::nullopt;
  const Point& first = points.back();  // the oldest: its aspect is the guess's
  std::optional<std::pair<int64_t, int64_t>> next;
  std::string how;
  if (length) {
    const Point &a = points[0], &b = points[1];
    const double slope = static_cast<double>(a.got - b.got) / static_cast<double>(a.w - b.w);
    if (slope <= 0) return std::nullopt;
    const auto w = static_cast<int64_t>(std::llround(static_cast<double>(a.w) + static_cast<double>(want - a.got) / slope));
    if (w < 1 || w > (int64_t{1} << 20) || tried.count({1, w})) return std::nullopt;
    next = std::pair{int64_t{1}, w};
    how = "affine in the length";
  } else {
    std::array<double, 4> f{};
    bool solved = false;
    if (points.size() >= 4) {
      std::array<std::array<double, 5>, 4> a{};
      for (size_t k = 0; k < 4; ++k) {
        const auto h = static_cast<double>(points[k].h), w = static_cast<double>(points[k].w);
        a[k] = {h * w, h, w, 1, static_cast<double>(points[k].got)};
      }
      solved = Solve4(a, f);
    }
    if (solved) {
      next = Solutions(f, want, static_cast<double>(first.w) / static_cast<double>(first.h), tried);
      how = "bilinear in height and width, fitted to 4 candidates";
      if (!next) return std::nullopt;
    } else {
      // A probe: one size changed by a step past the strides' floors.
      const Point& p = points[0];
      const int64_t dh = std::max<int64_t>(8, p.h / 32 * 8), dw = std::max<int64_t>(8, p.w / 32 * 8);
      auto has = [&](bool same_h) {
        return std::any_of(points.begin() + 1, points.end(), [&](const Point& q) { return same_h ? q.h == p.h : q.w == p.w; });
      };
      next = !has(true) ? std::pair{p.h, p.w + dw} : !has(false) ? std::pair{p.h + dh, p.w} : std::pair{p.h + dh, p.w + dw};
      if (tried.count(*next)) return std::nullopt;
      how = "a probe of one size, to fit it";
    }
  }
  InputSpec s = cur;
  if (length) {
    s.shape[dims[0]] = next->second;
  } else {
    s.shape[dims[0]] = next->first;
    s.shape[dims[1]] = next->second;
  }
  return t.With(*i, s, "a count of " + std::to_string(want) + " where the input gives " + std::to_string(got) + ": " + how);
}

}  // namespace tsctl::refine
