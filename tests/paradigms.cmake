# Paradigm compilers (goal, convergence, invariants, imperative, fsm) and loop rendering.
little_loops_add_suite(test_paradigms FILES
  unit/test_paradigms_dispatch.cpp
  unit/test_paradigms_goal.cpp
  unit/test_paradigms_convergence.cpp
  unit/test_paradigms_invariants.cpp
  unit/test_paradigms_imperative.cpp
  unit/test_paradigms_run.cpp
  unit/test_render.cpp)

# Graphviz must accept every DOT golden file (the goldens are what render_dot() produces;
# test_paradigms fails when they drift). Skipped when `dot` is not installed.
find_program(DOT dot)
if(DOT)
  file(GLOB _ll_dot_goldens CONFIGURE_DEPENDS
       "${CMAKE_CURRENT_SOURCE_DIR}/fixtures/paradigms/golden/*.dot")
  foreach(_ll_dot IN LISTS _ll_dot_goldens)
    get_filename_component(_ll_dot_name "${_ll_dot}" NAME_WE)
    add_test(NAME paradigms_dot_svg_${_ll_dot_name}
             COMMAND "${DOT}" -Tsvg -o "${CMAKE_CURRENT_BINARY_DIR}/${_ll_dot_name}.svg" "${_ll_dot}")
  endforeach()
endif()
