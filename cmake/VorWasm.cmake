# vor_wasm_executable(): one Emscripten program linked with vor, in one of the two shapes
# this project builds, so that the link options are written once:
#
#   vor_wasm_executable(TARGET NODE SOURCES a.c ...)
#       a program run by node: its main() as usual, real files (NODERAWFS), the VOR_*
#       variables of process.env (wasm/prejs/node_env.js), exit at the end of main();
#       TARGET.cjs
#   vor_wasm_executable(TARGET WEB SOURCES a.c ... [EXPORT_NAME createX])
#       a module for a page: an ES6 factory (EXPORT_NAME), started by the page; TARGET.mjs
#
# Common options: OUTPUT_DIRECTORY dir, OUTPUT_NAME name, LINK_OPTIONS ... (added after the
# shape's own). Every program links vor_static, whose interface brings the JS libraries of
# wasm/js; they are link dependencies too (CMake does not see --js-library files as inputs).
function(vor_wasm_executable target)
  cmake_parse_arguments(PARSE_ARGV 1 W "NODE;WEB" "OUTPUT_DIRECTORY;OUTPUT_NAME;EXPORT_NAME" "SOURCES;LINK_OPTIONS")
  if(NOT EMSCRIPTEN)
    message(FATAL_ERROR "vor_wasm_executable(${target}): only in the wasm flavour (emcmake)")
  endif()
  if(W_NODE EQUAL W_WEB)
    message(FATAL_ERROR "vor_wasm_executable(${target}): NODE or WEB, one of them")
  endif()
  add_executable(${target} ${W_SOURCES})
  target_link_libraries(${target} PRIVATE vor_static)
  if(W_NODE)
    set_target_properties(${target} PROPERTIES SUFFIX ".cjs")
    target_link_options(${target} PRIVATE
      "SHELL:-s ENVIRONMENT=node" "SHELL:-s NODERAWFS=1" "SHELL:-s EXIT_RUNTIME=1"
      "SHELL:-s WASM_ASYNC_COMPILATION=0" "SHELL:--pre-js ${PROJECT_SOURCE_DIR}/wasm/prejs/node_env.js")
  else()
    set_target_properties(${target} PROPERTIES SUFFIX ".mjs")
    target_link_options(${target} PRIVATE "SHELL:-s ENVIRONMENT=web" "SHELL:-s MODULARIZE=1" "SHELL:-s EXPORT_ES6=1")
    if(W_EXPORT_NAME)
      target_link_options(${target} PRIVATE "SHELL:-s EXPORT_NAME=${W_EXPORT_NAME}")
    endif()
  endif()
  if(W_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${W_OUTPUT_DIRECTORY})
  endif()
  if(W_OUTPUT_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${W_OUTPUT_NAME})
  endif()
  if(W_LINK_OPTIONS)
    target_link_options(${target} PRIVATE ${W_LINK_OPTIONS})
  endif()
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${VOR_WASM_JS_LIBRARIES})
endfunction()
