#include "fit/tangent.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>

#include "fit/chain.hpp"
#include "robot/motion.hpp"

namespace sv::fitting {

namespace {

constexpr int kSolveIterations = 20;  // Levenberg-Marquardt steps per weight
constexpr int kAssignRounds = 2;      // reassignments of points to pieces per weight
constexpr int kSamplesPerPiece = 24;  // points of a piece the solve weighs
constexpr int kMaxAdded = 2;          // lines turned into arcs or arcs split, per run
constexpr double kMinChordPx = 0.25;  // no piece shrinks below this
// The weights of the tangent constraints (a radian against a pixel of distance), raised in
// turn: the fit moves from the pieces as they are (kinked) to a tangent-continuous curve
// through a path of nearby minima instead of jumping to a far one.
constexpr double kWeights[] = {10, 1e4, 1e7};
// A smooth run may leave its points by up to this (or the tolerance, if smaller, or as far as
// the kinked pieces did): the ink is seen at the pixel, and a thick stroke's tolerance is several.
constexpr double kFaithfulPx = 1.0;

double wrap_rad(double a) { return std::remainder(a, 2 * kPi); }

// Signed distance of q from the circle (or line, k = 0) through s with heading h and curvature
// k (d = the heading's unit vector), in the curvature form (Chernov): smooth through k = 0; its
// gradient by (s, h, k).
struct Residual {
  double e = 0;
  Vec2 ds;
  double dh = 0, dk = 0;
};
Residual residual(Vec2 q, Vec2 s, Vec2 d, double k) {
  const Vec2 n = perp(d), u = q - s;
  const double A = k * dot(u, u) - 2 * dot(u, n);
  const Vec2 w = u * k - n;
  const double W = std::max(norm(w), 1e-12), B = W + 1;
  Residual r;
  r.e = A / B;
  const Vec2 dA_ds = n * 2 - u * (2 * k), dB_ds = w * (-k / W);
  const double dA_dh = 2 * dot(u, d), dB_dh = dot(d, w) / W;
  const double dA_dk = dot(u, u), dB_dk = dot(u, w) / W;
  const double B2 = B * B;
  r.ds = (dA_ds * B - dB_ds * A) / B2;
  r.dh = (dA_dh * B - dB_dh * A) / B2;
  r.dk = (dA_dk * B - dB_dk * A) / B2;
  return r;
}

// One smooth run to fit: its points, the pieces' boundaries in them, which pieces are lines,
// and how far each piece may leave its points. Its ends stay where they are: at a corner or a
// junction they are shared, and at a free end of the stroke the distances to a line or circle
// would not hold the end (only the points beyond it would, as they are reassigned).
struct Run {
  std::vector<Vec2> q;
  std::vector<int> bounds;  // n + 1 indices into q; piece k covers [bounds[k], bounds[k + 1]]
  std::vector<char> line;
  bool closed = false;  // ends where it starts, with the heading it started with
  std::vector<double> limit;
};

// The run as its joints: position and heading at each (n + 1; closed: the last is the first).
// A line runs from one joint to the next; an arc leaves its first joint along that joint's
// heading and ends at the next. Tangent continuity is then one equation per arc (it arrives
// along the next joint's heading: theta1 = 2 phi - theta0, phi the chord's direction) and two
// per line (both headings along it).
struct Joints {
  std::vector<Vec2> p;
  std::vector<double> h;
};

// The chord between two joints: its direction and length, and their derivatives by the end.
struct Chord {
  Vec2 u;
  double c = 0, phi = 0;
  Vec2 dphi_dq;  // d phi / d q; d phi / d p is its negative
};
Chord chord(Vec2 p, Vec2 q) {
  Chord ch;
  ch.u = q - p;
  ch.c = std::max(norm(ch.u), 1e-12);
  ch.phi = angle_of(ch.u);
  ch.dphi_dq = perp(ch.u) / (ch.c * ch.c);
  return ch;
}

class Solver {
 public:
  Solver(const Run& run, Joints j) : run_(run), j_(std::move(j)), bounds_(run.bounds) {
    const int n = pieces();
    pi_.assign(n + 1, -1);
    hi_.assign(n + 1, -1);
    int at = 0;
    for (int k = 0; k <= n; ++k) {
      if (run_.closed && k == n) {
        pi_[n] = pi_[0];
        hi_[n] = hi_[0];
        break;
      }
      if (k > 0 && k < n) pi_[k] = (at += 2) - 2;
      hi_[k] = at++;
    }
    params_ = at;
    sample();
  }

  const Joints& joints() const { return j_; }
  const std::vector<int>& bounds() const { return bounds_; }

  void solve() {
    for (double w : kWeights) {
      for (int round = 0; round < kAssignRounds; ++round) {
        minimize(w);
        if (!reassign()) break;
      }
    }
    project();
    reassign();
  }

  // The pieces: an arc's sweep is twice the turn from its start heading to its chord.
  std::vector<Shape> shapes() const {
    std::vector<Shape> out;
    for (int i = 0; i < pieces(); ++i) {
      const Vec2 a = j_.p[i], b = j_.p[i + 1];
      const double sweep = 2 * wrap_rad(angle_of(b - a) - j_.h[i]);
      if (run_.line[i] || std::abs(sweep) < 1e-9) out.push_back(Shape::line(a, b));
      else out.push_back(Shape::arc(a, b, std::tan(sweep / 4)));
    }
    return out;
  }

 private:
  int pieces() const { return static_cast<int>(run_.line.size()); }

  std::vector<double> get() const {
    std::vector<double> x(params_);
    for (size_t k = 0; k < pi_.size(); ++k) {
      if (pi_[k] >= 0) x[pi_[k]] = j_.p[k].x, x[pi_[k] + 1] = j_.p[k].y;
      x[hi_[k]] = j_.h[k];
    }
    return x;
  }
  Joints with(const std::vector<double>& x) const {
    Joints j = j_;
    for (size_t k = 0; k < pi_.size(); ++k) {
      if (pi_[k] >= 0) j.p[k] = {x[pi_[k]], x[pi_[k] + 1]};
      j.h[k] = x[hi_[k]];
    }
    return j;
  }

  // The piece each residual point belongs to: a boundary point to the piece it starts, the
  // last point to the last piece.
  int piece_of(int j) const {
    int i = static_cast<int>(std::upper_bound(bounds_.begin(), bounds_.end(), j) - bounds_.begin()) - 1;
    return std::clamp(i, 0, pieces() - 1);
  }

  // One residual and its derivatives by at most six unknowns (two joints' positions and
  // headings: an arc's tangent equation touches all of them).
  struct Row {
    double r = 0;
    int n = 0;
    std::array<int, 6> at{};
    std::array<double, 6> d{};
    void by_p(const std::vector<int>& pi, int k, Vec2 g) {
      if (pi[k] >= 0) add(pi[k], g.x), add(pi[k] + 1, g.y);
    }
    void add(int a, double v) {
      for (int j = 0; j < n; ++j)
        if (at[j] == a) {
          d[j] += v;
          return;
        }
      at[n] = a;
      d[n++] = v;
    }
  };

  // Every residual, in order — the points' distances to their pieces, then the tangent
  // equations weighted by sqrt(w) — handed to `use` (with its derivatives when `derivatives`).
  template <typename Use>
  void residuals(const Joints& jt, double w, bool derivatives, Use&& use) const {
    const int n = pieces();
    // Per piece: its chord, its heading at the start, and an arc's curvature from them
    // (k = 2 sin(phi - h) / c) with the curvature's derivatives by the end and the heading.
    struct Piece {
      Chord c;
      Vec2 dir, dk_dq;
      double k = 0, dk_dh = 0;
    };
    std::vector<Piece> pc(n);
    for (int i = 0; i < n; ++i) {
      Piece& a = pc[i];
      a.c = chord(jt.p[i], jt.p[i + 1]);
      if (run_.line[i]) {
        a.dir = a.c.u / a.c.c;
        continue;
      }
      a.dir = from_angle(jt.h[i]);
      const double beta = a.c.phi - jt.h[i], sb = std::sin(beta), cb = std::cos(beta);
      a.k = 2 * sb / a.c.c;
      a.dk_dh = -2 * cb / a.c.c;
      a.dk_dq = a.c.dphi_dq * (2 * cb / a.c.c) - a.c.u * (2 * sb / (a.c.c * a.c.c * a.c.c));
    }
    for (int j : samples_) {
      const int i = piece_of(j);
      const Piece& a = pc[i];
      const Residual res = residual(run_.q[j], jt.p[i], a.dir, a.k);
      Row row;
      row.r = res.e;
      if (derivatives) {
        if (run_.line[i]) {  // the heading is the chord's
          row.by_p(pi_, i, res.ds - a.c.dphi_dq * res.dh);
          row.by_p(pi_, i + 1, a.c.dphi_dq * res.dh);
        } else {
          row.by_p(pi_, i, res.ds - a.dk_dq * res.dk);
          row.by_p(pi_, i + 1, a.dk_dq * res.dk);
          row.add(hi_[i], res.dh + res.dk * a.dk_dh);
        }
      }
      use(row);
    }
    const double sw = std::sqrt(w);
    for (int i = 0; i < n; ++i) {
      const Chord& c = pc[i].c;
      if (run_.line[i]) {
        for (int k : {i, i + 1}) {
          Row row;
          row.r = sw * wrap_rad(jt.h[k] - c.phi);
          if (derivatives) {
            row.add(hi_[k], sw);
            row.by_p(pi_, i + 1, c.dphi_dq * -sw);
            row.by_p(pi_, i, c.dphi_dq * sw);
          }
          use(row);
        }
      } else {
        Row row;
        row.r = sw * wrap_rad(jt.h[i + 1] + jt.h[i] - 2 * c.phi);
        if (derivatives) {
          row.add(hi_[i + 1], sw);
          row.add(hi_[i], sw);
          row.by_p(pi_, i + 1, c.dphi_dq * (-2 * sw));
          row.by_p(pi_, i, c.dphi_dq * (2 * sw));
        }
        use(row);
      }
    }
  }

  double cost(const Joints& jt, double w) const {
    double f = 0;
    residuals(jt, w, false, [&](const Row& row) { f += row.r * row.r; });
    return f;
  }

  // The normal equations J'J and J'r, summed row by row (each row touches at most six unknowns).
  void normal_equations(double w, Eigen::MatrixXd& N, Eigen::VectorXd& g) const {
    N.setZero(params_, params_);
    g.setZero(params_);
    residuals(j_, w, true, [&](const Row& row) {
      for (int a = 0; a < row.n; ++a) {
        g(row.at[a]) += row.d[a] * row.r;
        for (int b = 0; b < row.n; ++b) N(row.at[a], row.at[b]) += row.d[a] * row.d[b];
      }
    });
  }

  // No piece shrinks to nothing (one already short may shrink by half).
  bool valid(const Joints& jt) const {
    for (int i = 0; i < pieces(); ++i)
      if (!(dist(jt.p[i], jt.p[i + 1]) >= std::min(kMinChordPx, 0.5 * dist(j_.p[i], j_.p[i + 1])))) return false;
    return true;
  }

  // Levenberg-Marquardt on the points' distances and the weighted tangent equations.
  void minimize(double w) {
    Eigen::MatrixXd N;
    Eigen::VectorXd g;
    normal_equations(w, N, g);
    double lambda = 1e-3, f = cost(j_, w);
    for (int it = 0; it < kSolveIterations; ++it) {
      const std::vector<double> x0 = get();
      bool stepped = false;
      for (; lambda < 1e12 && !stepped; lambda *= 8) {
        Eigen::MatrixXd K = N;
        for (int a = 0; a < params_; ++a) K(a, a) += lambda * (N(a, a) + 1e-9);
        const Eigen::VectorXd step = K.ldlt().solve(-g);
        if (!step.allFinite()) continue;
        std::vector<double> x = x0;
        for (int a = 0; a < params_; ++a) x[a] += step(a);
        Joints next = with(x);
        if (!valid(next)) continue;
        const double fn = cost(next, w);
        if (!(fn < f)) continue;
        const bool done = f - fn <= 1e-7 * (1 + f);
        j_ = std::move(next);
        f = fn;
        lambda = std::max(lambda * 0.3 / 8, 1e-9);
        stepped = true;
        if (done) return;
        normal_equations(w, N, g);
      }
      if (!stepped) return;
    }
  }

  // Newton steps of least norm onto the tangent equations, which the penalty leaves a hair off.
  void project() {
    const int m = static_cast<int>(samples_.size());
    for (int it = 0; it < 5; ++it) {
      std::vector<Row> rows;
      int k = 0;
      residuals(j_, 1, true, [&](const Row& row) {
        if (k++ >= m) rows.push_back(row);
      });
      const int nc = static_cast<int>(rows.size());
      Eigen::VectorXd cv(nc);
      Eigen::MatrixXd A = Eigen::MatrixXd::Zero(nc, params_);
      for (int c = 0; c < nc; ++c) {
        cv(c) = rows[c].r;
        for (int a = 0; a < rows[c].n; ++a) A(c, rows[c].at[a]) += rows[c].d[a];
      }
      if (nc == 0 || cv.norm() < 1e-13) return;
      const Eigen::VectorXd step = -A.transpose() * (A * A.transpose()).ldlt().solve(cv);
      if (!step.allFinite()) return;
      std::vector<double> x = get();
      for (int a = 0; a < params_; ++a) x[a] += step(a);
      j_ = with(x);
    }
  }

  // Moves each inner boundary to the point nearest its joint, searched from where it was
  // (the points run along the curve; a global nearest could be a point of another turn of it);
  // whether any moved.
  bool reassign() {
    const int n = pieces(), last = static_cast<int>(run_.q.size()) - 1;
    std::vector<int> b = bounds_;
    for (int i = 1; i < n; ++i) {
      const int lo = b[i - 1] + 1, hi = (i + 1 < n ? bounds_[i + 1] : last) - 1;
      if (lo > hi) continue;
      int at = std::clamp(b[i], lo, hi);
      auto d = [&](int j) { return dist(run_.q[j], j_.p[i]); };
      while (at > lo && d(at - 1) < d(at)) --at;
      while (at < hi && d(at + 1) < d(at)) ++at;
      b[i] = at;
    }
    const bool moved = b != bounds_;
    bounds_ = std::move(b);
    sample();
    return moved;
  }

  // The points the solve weighs: at most kSamplesPerPiece of each piece, evenly spread (the
  // tolerance is then checked on all of them).
  void sample() {
    samples_.clear();
    const int n = pieces(), last = static_cast<int>(run_.q.size()) - 1;
    for (int i = 0; i < n; ++i) {
      const int a = bounds_[i], b = i + 1 < n ? bounds_[i + 1] : last + 1, count = b - a;
      const int take = std::min(count, kSamplesPerPiece);
      for (int t = 0; t < take; ++t) samples_.push_back(a + static_cast<int>(static_cast<long>(t) * count / take));
    }
  }

  const Run& run_;
  Joints j_;
  std::vector<int> bounds_, samples_;
  std::vector<int> pi_, hi_;  // per joint: first parameter of its position (-1: held), of its heading
  int params_ = 0;
};

// The joints of pieces as they are: each joint's heading that of a line meeting there, else
// the mean of the two pieces' directions.
Joints joints_of(const std::vector<Shape>& shapes, const std::vector<char>& line, bool closed) {
  const size_t n = shapes.size();
  Joints j;
  for (size_t i = 0; i <= n; ++i) {
    j.p.push_back(i < n ? shapes[i].p0 : shapes[n - 1].p1);
    const bool has_in = i > 0 || closed, has_out = i < n || closed;
    const size_t in = (i + n - 1) % n, out = i % n;
    Vec2 t;
    if (has_in && line[in]) t = shapes[in].end_tangent();
    else if (has_out && line[out]) t = shapes[out].start_tangent();
    else if (has_in && has_out) t = unit(shapes[in].end_tangent() + shapes[out].start_tangent());
    else t = has_in ? shapes[in].end_tangent() : shapes[out].start_tangent();
    j.h.push_back(angle_of(t));
  }
  return j;
}

// The largest distance of each piece's points (its span, both ends included) to its shape,
// over the limit allowed; the worst piece and by how much (<= 1 within limits).
std::pair<int, double> worst_piece(const std::vector<Shape>& shapes, const Run& run, const std::vector<int>& bounds) {
  std::pair<int, double> worst{-1, 0};
  for (size_t i = 0; i < shapes.size(); ++i) {
    Points span(run.q.data() + bounds[i], static_cast<size_t>(bounds[i + 1] - bounds[i] + 1));
    double over = max_distance(shapes[i], span) / run.limit[i];
    if (std::abs(shapes[i].sweep_rad()) > kPi * 350 / 180) over = INFINITY;
    if (over > worst.second) worst = {static_cast<int>(i), over};
  }
  return worst;
}

struct Fitted {
  std::vector<Shape> shapes;
  std::vector<int> bounds;
};

// The tangent-continuous fit of a run, adding at most kMaxAdded degrees of freedom where it
// must (lines bend only when `bend_lines`); nullopt when it stays beyond tolerance.
std::optional<Fitted> fit_run(Run run, const std::vector<Shape>& pieces, bool bend_lines) {
  // Each attempt starts from the pieces as they were (a failed solve may have collapsed one),
  // with the freedom added so far.
  std::vector<Shape> shapes = pieces;
  for (int added = 0;; ++added) {
    Solver solver(run, joints_of(shapes, run.line, run.closed));
    solver.solve();
    Fitted f{solver.shapes(), solver.bounds()};
    auto [w, over] = worst_piece(f.shapes, run, f.bounds);
    if (over <= 1 + 1e-9) return f;
    if (added == kMaxAdded || w < 0 || !std::isfinite(over)) return std::nullopt;
    // The worst piece gets a degree of freedom: a line bends, an arc splits at its middle.
    if (run.line[w]) {
      if (!bend_lines) return std::nullopt;
      run.line[w] = 0;
      continue;
    }
    const int mid = (run.bounds[w] + run.bounds[w + 1]) / 2;
    if (mid <= run.bounds[w] || mid >= run.bounds[w + 1]) return std::nullopt;
    const Shape s = shapes[w];
    const double half = std::tan(s.sweep_rad() / 8);
    shapes[w] = Shape::arc(s.p0, s.at(0.5), half);
    shapes.insert(shapes.begin() + w + 1, Shape::arc(s.at(0.5), s.p1, half));
    run.bounds.insert(run.bounds.begin() + w + 1, mid);
    run.line.insert(run.line.begin() + w + 1, 0);
    run.limit.insert(run.limit.begin() + w + 1, run.limit[w]);
  }
}

}  // namespace

void make_tangent_continuous(std::vector<Piece>& pieces, Points pts, bool closed, const FitParams& p) {
  const int n = static_cast<int>(pieces.size());
  if (n < 2 || p.smooth_joint_deg <= 0 || pieces[0].shape.type == PrimType::circle) return;
  const ChainPoints cp(pts, closed);
  // The ink's turn at every joint (joint 0: the closing joint of a closed chain).
  std::vector<int> at(n);
  for (int k = 0; k < n; ++k) at[k] = pieces[k].i0;
  const Points loop = closed ? pts.first(pts.size() - 1) : pts;
  const std::vector<double> turn = ink_corner_turns(loop, closed, at, p.smooth_window_px);
  std::vector<char> ink_smooth(n, 0);
  for (int k = closed ? 0 : 1; k < n; ++k) ink_smooth[k] = turn[k] < deg2rad(p.smooth_joint_deg);
  // A smooth closing joint only makes sense when the whole loop is one run.
  const bool all = std::all_of(ink_smooth.begin() + 1, ink_smooth.end(), [](char s) { return s; });
  const bool whole_loop = closed && ink_smooth[0] && all;
  if (closed && !whole_loop) ink_smooth[0] = 0;

  std::vector<Piece> out;
  const double tol = p.tolerance_px;
  // Fits pieces [first, last] as one run (cut at its sharpest joint, and each side tried
  // again, when that fails or is slower), appending the result to `out`.
  std::function<void(int, int)> fit_span = [&](int first, int last) {
    if (first == last) {
      out.push_back(pieces[first]);
      return;
    }
    Run run;
    const int lo = pieces[first].i0, hi = pieces[last].i1;
    for (int k = lo; k <= hi; ++k) run.q.push_back(cp.at(k));
    std::vector<Shape> shapes;
    for (int k = first; k <= last; ++k) {
      run.bounds.push_back(pieces[k].i0 - lo);
      run.line.push_back(pieces[k].shape.type == PrimType::line);
      shapes.push_back(pieces[k].shape);
      Points span(run.q.data() + (pieces[k].i0 - lo), static_cast<size_t>(pieces[k].i1 - pieces[k].i0 + 1));
      run.limit.push_back(std::max(std::min(tol, kFaithfulPx), max_distance(pieces[k].shape, span)));
    }
    run.bounds.push_back(hi - lo);
    run.closed = whole_loop && first == 0 && last == n - 1;
    std::optional<Fitted> f = fit_run(run, shapes, p.arcs_allowed());
    if (f && p.robot_ppi > 0 && run_time_s(f->shapes, p.robot_ppi) > run_time_s(shapes, p.robot_ppi)) f.reset();
    if (f) {
      for (size_t i = 0; i < f->shapes.size(); ++i) out.push_back({f->shapes[i], lo + f->bounds[i], lo + f->bounds[i + 1]});
      return;
    }
    // Cut at the sharpest joint and try each side.
    int cut = first + 1;
    double sharpest = -1;
    for (int k = first + 1; k <= last; ++k) {
      Vec2 a = pieces[k - 1].shape.end_tangent(), b = pieces[k].shape.start_tangent();
      double kink = std::atan2(std::abs(cross(a, b)), dot(a, b));
      if (kink > sharpest) sharpest = kink, cut = k;
    }
    fit_span(first, cut - 1);
    fit_span(cut, last);
  };
  int first = 0;
  for (int k = 1; k <= n; ++k)
    if (k == n || !ink_smooth[k]) {
      fit_span(first, k - 1);
      first = k;
    }
  pieces = std::move(out);
}

}  // namespace sv::fitting
