# The well-kept libraries cuforge builds on: Debian's -dev packages (nlohmann-json3-dev, libfmt-dev,
# libxxhash-dev, libcli11-dev) where installed; otherwise their headers under CUFORGE_DEPS_INCLUDE
# (header-only use), which is how the GPU machine, which has no package registry, gets them.
find_package(CUDAToolkit REQUIRED)
set(CUFORGE_DEPS_INCLUDE "" CACHE PATH "Directory holding nlohmann/, fmt/, CLI/ and xxhash.h headers")

find_package(nlohmann_json 3.10 QUIET)
find_package(fmt 9 QUIET)
find_package(CLI11 QUIET)

add_library(cuforge_deps_json INTERFACE)
add_library(cuforge_deps::json ALIAS cuforge_deps_json)
add_library(cuforge_deps_fmt INTERFACE)
add_library(cuforge_deps::fmt ALIAS cuforge_deps_fmt)
add_library(cuforge_deps_cli11 INTERFACE)
add_library(cuforge_deps::cli11 ALIAS cuforge_deps_cli11)
add_library(cuforge_deps_xxhash INTERFACE)
add_library(cuforge_deps::xxhash ALIAS cuforge_deps_xxhash)

function(cuforge_header_dependency target header package_hint)
  find_path(${target}_INCLUDE ${header} HINTS ${CUFORGE_DEPS_INCLUDE})
  if(NOT ${target}_INCLUDE)
    message(FATAL_ERROR "${header} not found: apt-get install ${package_hint}, or set CUFORGE_DEPS_INCLUDE")
  endif()
  target_include_directories(${target} SYSTEM INTERFACE ${${target}_INCLUDE})
endfunction()

if(nlohmann_json_FOUND)
  target_link_libraries(cuforge_deps_json INTERFACE nlohmann_json::nlohmann_json)
else()
  cuforge_header_dependency(cuforge_deps_json nlohmann/json.hpp nlohmann-json3-dev)
endif()

# fmt is used header-only so that the Python module and the CLI carry no extra shared library.
if(TARGET fmt::fmt-header-only)
  target_link_libraries(cuforge_deps_fmt INTERFACE fmt::fmt-header-only)
else()
  cuforge_header_dependency(cuforge_deps_fmt fmt/format.h libfmt-dev)
  target_compile_definitions(cuforge_deps_fmt INTERFACE FMT_HEADER_ONLY=1)
endif()

if(TARGET CLI11::CLI11)
  target_link_libraries(cuforge_deps_cli11 INTERFACE CLI11::CLI11)
else()
  cuforge_header_dependency(cuforge_deps_cli11 CLI/CLI.hpp libcli11-dev)
endif()

# xxHash inlined (XXH_INLINE_ALL): the digest code needs no library at run time.
cuforge_header_dependency(cuforge_deps_xxhash xxhash.h libxxhash-dev)
target_compile_definitions(cuforge_deps_xxhash INTERFACE XXH_INLINE_ALL=1)
