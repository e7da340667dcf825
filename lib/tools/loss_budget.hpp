// The largest losses a caller accepts, as SuggestOptimizations and SimulateEdit take them: the
// same three request fields, declared once, so both tools read a budget alike and an agent
// passes the same one to either.
#pragma once
#include <optional>
#include <vector>

#include "suggest/rank.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

// A request that takes a budget derives from this. None given: no bound.
struct LossBudgetRequest {
  std::optional<double> max_f1_loss, max_f1_1px_loss, max_chamfer_gain_px;
  suggest::Budget budget() const { return {max_f1_loss, max_f1_1px_loss, max_chamfer_gain_px}; }
};

// R's own fields followed by the budget's.
template <class R>
std::vector<RequestField<R>> with_loss_budget(std::vector<RequestField<R>> fields) {
  using O = std::optional<double>;
  const auto bound = [](const char* what) { return schema::nullable(schema::number(what, 0)); };
  fields.push_back(field<R, O>("max_f1_loss", &LossBudgetRequest::max_f1_loss, bound("largest f1 lost against the ink")));
  fields.push_back(field<R, O>("max_f1_1px_loss", &LossBudgetRequest::max_f1_1px_loss,
                               bound("largest f1 at 1 px lost against the ink")));
  fields.push_back(field<R, O>("max_chamfer_gain_px", &LossBudgetRequest::max_chamfer_gain_px,
                               bound("largest rise of the chamfer distance to the ink, px")));
  return fields;
}

}  // namespace sv
