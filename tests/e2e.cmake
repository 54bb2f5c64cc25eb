# End-to-end tests: run the ll-loop program as a process (Python 3 stdlib scripts).
# ll-loop is built from examples/ (examples/ll_loop.cmake), so these need the examples, the
# YAML loader and a POSIX system.
if(UNIX AND LITTLE_LOOPS_BUILD_EXAMPLES AND LITTLE_LOOPS_WITH_YAML)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    set(_ll_e2e_dir "${CMAKE_CURRENT_SOURCE_DIR}/e2e")
    file(GLOB _ll_e2e_scripts CONFIGURE_DEPENDS "${_ll_e2e_dir}/test_*.py")
    list(SORT _ll_e2e_scripts)
    foreach(_script IN LISTS _ll_e2e_scripts)
      get_filename_component(_name "${_script}" NAME_WE)
      string(REGEX REPLACE "^test_" "" _name "${_name}")
      add_test(NAME e2e_${_name}
               COMMAND "${Python3_EXECUTABLE}" "${_script}"
               WORKING_DIRECTORY "${_ll_e2e_dir}")
      set_tests_properties(e2e_${_name} PROPERTIES
        TIMEOUT 60
        LABELS e2e
        ENVIRONMENT "LL_LOOP=$<TARGET_FILE:ll-loop>;LL_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1")
    endforeach()
    if(TEST e2e_newcomer)  # it also configures the project once (BUILD_TESTING=OFF)
      set_tests_properties(e2e_newcomer PROPERTIES TIMEOUT 240)
    endif()
  endif()
endif()
