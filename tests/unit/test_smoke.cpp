#include <little_loops/fsm.hpp>
#include <doctest/doctest.h>
TEST_CASE("smoke") {
  little_loops::error e{little_loops::errc::invalid_loop, "bad", "states.x"};
  CHECK(little_loops::to_string(e) == "LL-E102 at states.x: bad");
  little_loops::fsm_loop loop;
  CHECK(loop.max_iterations == 50);
}
