# ll-loop: the reference command-line host (runs loops with the POSIX runner, loads YAML).
if(UNIX AND TARGET little_loops::yaml)
  little_loops_add_example(ll-loop
    FILES
      ll_loop/main.cpp
      ll_loop/args.cpp
      ll_loop/display.cpp
      ll_loop/inputs.cpp
      ll_loop/learning_registry.cpp
      ll_loop/loading.cpp
      ll_loop/verbs_inspect.cpp
      ll_loop/verbs_run.cpp
      ll_loop/verbs_state.cpp
    LIBS little_loops::posix little_loops::yaml)
  target_include_directories(ll-loop PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/ll_loop")
  # With LITTLE_LOOPS_COMPILED=ON, ll-loop is built against the compiled library (CI's
  # release_examples job does so, which keeps that mode building).
  if(TARGET little_loops::compiled)
    target_link_libraries(ll-loop PRIVATE little_loops::compiled)
  endif()
  # Its own install component: `cmake --install BUILD --component ll-loop` installs only
  # bin/ll-loop (a plain `cmake --install` installs it with the library).
  if(LITTLE_LOOPS_INSTALL)
    install(TARGETS ll-loop RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT ll-loop)
  endif()
endif()
