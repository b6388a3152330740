# muster_fuzz_test(<name> SOURCE <file> LINK <library> DICT <dict> UBSAN <options>
#                  CORPUS_ROOT <dir> ARTIFACTS <dir> SEED <command...>)
#
# One libFuzzer target, muster_fuzz_<name>, and its CTest test fuzz_<name>
# (label "fuzz"), run for MUSTER_FUZZ_SECONDS on <CORPUS_ROOT>/<name>.
# SEED is the command that seeds the corpus; the corpus directory is appended
# as its last argument (e.g. `${CMAKE_COMMAND} -E copy <files>`). It runs on
# every build of the target: copying over the same files is cheap and keeps
# the inputs libFuzzer added. Crashing inputs land in <ARTIFACTS>/<name>-*.
function(muster_fuzz_test name)
  cmake_parse_arguments(F "" "SOURCE;LINK;DICT;UBSAN;CORPUS_ROOT;ARTIFACTS" "SEED" ${ARGN})
  set(target muster_fuzz_${name})
  set(corpus ${F_CORPUS_ROOT}/${name})

  add_executable(${target} ${F_SOURCE})
  target_link_libraries(${target} PRIVATE ${F_LINK} muster_flags)
  target_link_options(${target} PRIVATE -fsanitize=fuzzer)

  add_custom_target(${target}_corpus
                    COMMAND ${CMAKE_COMMAND} -E make_directory ${corpus}
                    COMMAND ${F_SEED} ${corpus}
                    COMMENT "Seeding the ${name} fuzz corpus"
                    VERBATIM)
  add_dependencies(${target} ${target}_corpus)

  add_test(NAME fuzz_${name}
           COMMAND ${target} -max_total_time=${MUSTER_FUZZ_SECONDS} -timeout=10
                   -rss_limit_mb=2048 -dict=${F_DICT}
                   -artifact_prefix=${F_ARTIFACTS}/${name}- ${corpus})
  math(EXPR test_timeout "${MUSTER_FUZZ_SECONDS} + 120")
  set_tests_properties(fuzz_${name} PROPERTIES LABELS fuzz TIMEOUT ${test_timeout}
                       ENVIRONMENT "UBSAN_OPTIONS=${F_UBSAN}")
endfunction()
