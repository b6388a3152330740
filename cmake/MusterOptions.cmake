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
