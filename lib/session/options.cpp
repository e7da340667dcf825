#include "session/options.hpp"

#include "core/error.hpp"

namespace sv {

std::optional<Store> open_store(const CommonOptions& o) {
  if (!o.rev.empty() && o.no_store) throw Error(Code::invalid_selection, "--rev needs a store; --no-store contradicts it");
  std::optional<Store> store;
  if (!o.no_store)
    if (auto root = Store::locate(o.store)) store.emplace(*root);
  if (!o.rev.empty() && !store) throw Error(Code::not_found, "--rev needs a store and none was found (sv-commit init)");
  return store;
}

}  // namespace sv
