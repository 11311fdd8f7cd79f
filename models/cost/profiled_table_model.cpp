#include "models/cost/kernel_cost_model.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace cs {

// One table in log space.
struct ProfiledTableModel::Table {
  std::string family, key;    // key: dtype, or memcpy direction
  Eigen::MatrixXd log_shapes; // points x dims
  Eigen::VectorXd log_seconds;
  Eigen::VectorXd low, high; // per-dimension range (log)
};

ProfiledTableModel::ProfiledTableModel(const DeviceProfile& profile, std::unique_ptr<KernelCostModel> fallback)
    : fallback_(std::move(fallback))
{
  for (const auto& t : profile.tables) {
    if (t.shapes.empty())
      continue;
    auto table = std::make_shared<Table>();
    table->family = t.family;
    table->key = t.dtype;
    const auto dims = static_cast<Eigen::Index>(t.shapes.front().size());
    if (dims > 4) // kernel_shape() has at most 4 dimensions; predict() sizes its matrices for that
      throw std::invalid_argument("profile table " + t.family + " has shapes of more than 4 dimensions");
    table->log_shapes.resize(static_cast<Eigen::Index>(t.shapes.size()), dims);
    table->log_seconds.resize(static_cast<Eigen::Index>(t.shapes.size()));
    for (std::size_t i = 0; i < t.shapes.size(); ++i) {
      if (static_cast<Eigen::Index>(t.shapes[i].size()) != dims)
        throw std::invalid_argument("profile table " + t.family + " mixes shapes of different dimensions");
      for (Eigen::Index d = 0; d < dims; ++d)
        table->log_shapes(static_cast<Eigen::Index>(i), d) = std::log(t.shapes[i][d]);
      table->log_seconds(static_cast<Eigen::Index>(i)) = std::log(t.seconds[i]);
    }
    table->low = table->log_shapes.colwise().minCoeff();
    table->high = table->log_shapes.colwise().maxCoeff();
    tables_.push_back(table);
  }
}

CostBreakdown ProfiledTableModel::predict(const Kernel& kernel) const
{
  const std::string family = kernel_family(kernel);
  const auto* copy = std::get_if<MemcpyKernel>(&kernel);
  const std::string key = copy ? copy->direction : kernel_dtype(kernel);
  const std::vector<double> shape = kernel_shape(kernel);
  for (const auto& t : tables_) {
    if (t->family != family || t->key != key || t->log_shapes.cols() != static_cast<Eigen::Index>(shape.size()))
      continue;
    const Eigen::Index dims = t->log_shapes.cols();
    Eigen::VectorXd x(dims);
    for (Eigen::Index d = 0; d < dims; ++d)
      x(d) = std::log(shape[d]);
    constexpr double kSlack = 1e-9;
    if (((x - t->low).array() < -kSlack).any() || ((t->high - x).array() < -kSlack).any())
      continue;
    // Nearest measured shapes, by distance in log space (only the k nearest are ordered).
    const Eigen::Index n = t->log_shapes.rows();
    const Eigen::Index k = std::min<Eigen::Index>(n, 2 * dims + 2);
    std::vector<std::pair<double, Eigen::Index>> by_distance(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i)
      by_distance[static_cast<std::size_t>(i)] = {(t->log_shapes.row(i).transpose() - x).squaredNorm(), i};
    std::partial_sort(by_distance.begin(), by_distance.begin() + k, by_distance.end());
    const Eigen::Index nearest = by_distance.front().second;
    if ((t->log_shapes.row(nearest).transpose() - x).cwiseAbs().maxCoeff() > std::log(2.0) + kSlack)
      continue;
    double log_t;
    if (by_distance.front().first < 1e-24) {
      log_t = t->log_seconds(nearest);
    } else {
      // Small fixed-capacity matrices: no heap allocation on this path (at most 10 points, 4 dimensions).
      using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 10, 5>;
      using Vector = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 10, 1>;
      Matrix A(k, dims + 1);
      Vector b(k);
      for (Eigen::Index r = 0; r < k; ++r) {
        const Eigen::Index i = by_distance[static_cast<std::size_t>(r)].second;
        const double w = 1.0 / std::max(std::sqrt(by_distance[static_cast<std::size_t>(r)].first), 1e-6);
        A(r, 0) = w;
        A.row(r).tail(dims) = w * (t->log_shapes.row(i).transpose() - x).transpose();
        b(r) = w * t->log_seconds(i);
      }
      // Rank-deficient tables (e.g. square sweeps, where m = n = k) still get the minimum-norm plane.
      Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 5, 1> coef = A.completeOrthogonalDecomposition().solve(b);
      log_t = coef(0); // the plane is centred on the query
    }
    CostBreakdown out;
    out.total = std::exp(log_t);
    out.model = "profiled";
    out.detail = "interpolated from " + std::to_string(k) + " measured shapes";
    // Attribute the measured time the way the analytical model would split it.
    CostBreakdown analytic = fallback_->predict(kernel);
    // The tables were measured on every SM: a GEMM launched without some (GemmKernel::sm_margin) takes as much longer
    // as the analytical model says its waves do.
    if (const auto* g = std::get_if<GemmKernel>(&kernel); g && g->sm_margin > 0) {
      GemmKernel whole = *g;
      whole.sm_margin = 0;
      const double all_sms = fallback_->predict(whole).total;
      if (all_sms > 0)
        out.total *= analytic.total / all_sms;
    }
    out.launch = std::min(analytic.launch, out.total);
    double rest = out.total - out.launch;
    double share = analytic.compute + analytic.memory > 0 ? analytic.compute / (analytic.compute + analytic.memory) : 0;
    out.compute = rest * share;
    out.memory = rest * (1 - share);
    return out;
  }
  return fallback_->predict(kernel);
}

} // namespace cs
