// The error code a call throws; a call that throws nothing fails the test.
#pragma once
#include <catch2/catch.hpp>
#include <functional>

#include "core/error.hpp"

inline sv::Code code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sv::Error& e) {
    return e.code();
  }
  FAIL("no error thrown");
  return sv::Code::internal;
}
