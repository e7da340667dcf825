#include "fit/moments.hpp"

#include <cmath>
#include <limits>

namespace sv::fitting {

SpanMoments::SpanMoments(Points pts) {
  Polyline samples;
  samples.reserve(pts.size());
  at_.resize(pts.size());
  for (size_t k = 0; k < pts.size(); ++k) {
    if (k > 0) append_between(pts[k - 1], pts[k], 1.0, samples);
    at_[k] = static_cast<int>(samples.size());
    samples.push_back(pts[k]);
  }
  // Moments about the centroid of all samples keep the fourth powers small.
  for (Vec2 p : samples) origin_ = origin_ + p;
  if (!samples.empty()) origin_ = origin_ / static_cast<double>(samples.size());
  prefix_.assign(samples.size() + 1, Sums{});
  for (size_t k = 0; k < samples.size(); ++k) {
    double x = samples[k].x - origin_.x, y = samples[k].y - origin_.y;
    Sums s = prefix_[k];
    double xa = 1;
    for (int a = 0; a <= kOrder; ++a) {
      double xy = xa;
      for (int b = 0; a + b <= kOrder; ++b) {
        s[slot(a, b)] += xy;
        xy *= y;
      }
      xa *= x;
    }
    prefix_[k + 1] = s;
  }
}

template <int Order>
void SpanMoments::central(int i, int j, double mu[5][5]) const {
  static_assert(Order <= kOrder);
  double raw[5][5] = {};
#pragma GCC unroll 5
  for (int a = 0; a <= Order; ++a)
#pragma GCC unroll 5
    for (int b = 0; a + b <= Order; ++b)
      raw[a][b] = sum(i, j, slot(a, b));
  double n = raw[0][0], mx = raw[1][0] / n, my = raw[0][1] / n;
  static constexpr double binom[5][5] = {
      {1, 0, 0, 0, 0}, {1, 1, 0, 0, 0}, {1, 2, 1, 0, 0}, {1, 3, 3, 1, 0}, {1, 4, 6, 4, 1}};
  double px[5] = {1}, py[5] = {1};  // powers of -mx and -my
  for (int k = 1; k <= Order; ++k) {
    px[k] = px[k - 1] * -mx;
    py[k] = py[k - 1] * -my;
  }
  // Binomial shift of the raw sums to the span's centroid, of the moments line_sse and kasa
  // read: the second and third orders, and of the fourth those of (u^2 + v^2)^2. Unrolled (the
  // loops' bounds and the binomials become constants), a fifth of the instructions of the loops.
#pragma GCC unroll 5
  for (int p = 0; p <= Order; ++p)
#pragma GCC unroll 5
    for (int q = 0; p + q <= Order; ++q) {
      if (p + q < 2 || (p + q == 4 && p % 2 == 1)) continue;
      double s = 0;
#pragma GCC unroll 5
      for (int a = 0; a <= p; ++a)
#pragma GCC unroll 5
        for (int b = 0; b <= q; ++b)
          s += binom[p][a] * binom[q][b] * px[p - a] * py[q - b] * raw[a][b];
      mu[p][q] = s;
    }
}

double SpanMoments::line_sse(int i, int j) const {
  if (samples(i, j) < 3) return 0;
  double mu[5][5];
  central<2>(i, j, mu);
  double tr = mu[2][0] + mu[0][2];
  double disc = std::hypot(mu[2][0] - mu[0][2], 2 * mu[1][1]);
  return std::max(0.0, 0.5 * (tr - disc));  // the smaller eigenvalue of the scatter matrix
}

std::optional<SpanMoments::Kasa> SpanMoments::kasa(int i, int j) const {
  if (samples(i, j) < 3) return std::nullopt;
  double mu[5][5];
  central<kOrder>(i, j, mu);
  double n = samples(i, j);
  double det = mu[2][0] * mu[0][2] - mu[1][1] * mu[1][1];
  double scale = mu[2][0] + mu[0][2];
  if (scale <= 0 || det <= 1e-12 * scale * scale) return std::nullopt;
  // Kasa on centred data: z = u^2 + v^2 ~ beta . (u, v) + c, least squares.
  double c = scale / n;
  double su = mu[3][0] + mu[1][2], sv = mu[2][1] + mu[0][3];
  double bu = (su * mu[0][2] - sv * mu[1][1]) / det;
  double bv = (sv * mu[2][0] - su * mu[1][1]) / det;
  double total = mu[4][0] + 2 * mu[2][2] + mu[0][4] - n * c * c;
  Kasa k;
  k.center = {bu / 2, bv / 2};
  k.r2 = 0.25 * (bu * bu + bv * bv) + c;
  k.residual = std::max(0.0, total - (bu * su + bv * sv));
  k.centroid = origin_ + Vec2{sum(i, j, slot(1, 0)), sum(i, j, slot(0, 1))} / n;
  return k;
}

double SpanMoments::circle_sse(int i, int j) const {
  auto k = kasa(i, j);
  if (!k) return std::numeric_limits<double>::infinity();
  return k->residual / (4 * k->r2);
}

std::optional<Circle> SpanMoments::circle_within(int i, int j, double max_sse) const {
  auto k = kasa(i, j);
  if (!k || !(k->residual / (4 * k->r2) <= max_sse)) return std::nullopt;
  return Circle{k->centroid + k->center, std::sqrt(k->r2)};
}

}  // namespace sv::fitting
