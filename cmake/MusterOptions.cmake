# Compiler flags shared by every muster target.
add_library(muster_flags INTERFACE)
target_compile_options(muster_flags INTERFACE -Wall -Wextra -Werror -Wno-missing-field-initializers)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(muster_flags INTERFACE -Wthread-safety)
endif()

if(MUSTER_SANITIZE AND MUSTER_TSAN)
  message(FATAL_ERROR "MUSTER_SANITIZE and MUSTER_TSAN are exclusive")
endif()
if(MUSTER_SANITIZE)
  target_compile_options(muster_flags INTERFACE -fsanitize=address,undefined
                         -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(muster_flags INTERFACE -fsanitize=address,undefined)
endif()
if(MUSTER_TSAN)
  target_compile_options(muster_flags INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(muster_flags INTERFACE -fsanitize=thread)
endif()

# libFuzzer build (kube/codec/fuzz, extender/fuzz): every muster target gets coverage
# instrumentation and ASan+UBSan so the codecs under test are instrumented;
# only the fuzz executables link the libFuzzer driver (-fsanitize=fuzzer).
if(MUSTER_BUILD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "MUSTER_BUILD_FUZZ=ON needs clang (libFuzzer); the C++ compiler is "
                        "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}. Configure with e.g. "
                        "CC=clang-14 CXX=clang++-14 in a fresh build directory.")
  endif()
  if(MUSTER_TSAN)
    message(FATAL_ERROR "MUSTER_BUILD_FUZZ and MUSTER_TSAN are exclusive")
  endif()
  # pointer-overflow stays recoverable so that kube/codec/fuzz/ubsan.supp can
  # silence RapidJSON 1.1.0's null-pointer arithmetic in internal/stack.h; the fuzz
  # tests run with halt_on_error=1, so any other report still aborts.
  target_compile_options(muster_flags INTERFACE -fsanitize=fuzzer-no-link,address,undefined
                         -fno-sanitize-recover=undefined -fsanitize-recover=pointer-overflow
                         -fno-omit-frame-pointer)
  # assert() and RAPIDJSON_ASSERT stay live whatever the build type: a
  # decoder calling GetString() on a number must abort under the fuzzer, not
  # read the wrong union member silently.
  target_compile_options(muster_flags INTERFACE -UNDEBUG)
  target_link_options(muster_flags INTERFACE -fsanitize=address,undefined)
endif()
