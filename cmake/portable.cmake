# PROVKIT_PORTABLE: the tools run unchanged on other distributions (Ubuntu
# 22.04-26.04, Debian 12-13, RHEL 9), as the release archive carries them
# (scripts/release.sh, docs/installing.md). What a host may lack or have in
# another version goes inside the binary or beside it:
# - the C++ runtime (libstdc++, libgcc) statically: RHEL 9's are older than
#   Debian 12's; with it, cmake/portable/glibc_floor.c, which keeps gcc 12's
#   unwinder and libstdc++ from requiring glibc 2.35 and 2.36;
# - the C++ libraries (yaml-cpp) and libarchive statically, from their Debian
#   archives; libarchive statically also drops libxml2 and ICU (only its xar
#   reader needs them, and provkit reads zip and tar);
# - toml++ header-only (python domain, lib/CMakeLists.txt), not its .so;
# - libcurl and the C libraries it needs stay shared, found through
#   RPATH=$ORIGIN/../lib (DT_RPATH, not RUNPATH, so that it also applies to
#   the libraries' own dependencies); the archive bundles them there.
option(PROVKIT_PORTABLE "Link the tools to run on other distributions (docs/installing.md)" ON)

if(PROVKIT_PORTABLE)
  find_library(PROVKIT_YAML_CPP_STATIC libyaml-cpp.a)
  find_library(PROVKIT_ARCHIVE_STATIC libarchive.a)
  if(NOT PROVKIT_YAML_CPP_STATIC OR NOT PROVKIT_ARCHIVE_STATIC)
    message(FATAL_ERROR "PROVKIT_PORTABLE needs libyaml-cpp.a and libarchive.a (found: "
      "${PROVKIT_YAML_CPP_STATIC}, ${PROVKIT_ARCHIVE_STATIC}); configure with -DPROVKIT_PORTABLE=OFF to link them shared")
  endif()
  add_library(provkit_glibc_floor OBJECT ${CMAKE_CURRENT_LIST_DIR}/portable/glibc_floor.c)
  add_library(provkit_yaml_cpp_static INTERFACE)
  target_link_libraries(provkit_yaml_cpp_static INTERFACE ${PROVKIT_YAML_CPP_STATIC})
  get_target_property(yaml_cpp_includes yaml-cpp INTERFACE_INCLUDE_DIRECTORIES)
  target_include_directories(provkit_yaml_cpp_static INTERFACE ${yaml_cpp_includes})
  # libarchive.a's own dependencies (pkg-config --static libarchive, less libxml2),
  # shared and bundled, by soname: their -dev packages need not be installed.
  add_library(provkit_archive_static INTERFACE)
  target_link_libraries(provkit_archive_static INTERFACE ${PROVKIT_ARCHIVE_STATIC}
    -l:libnettle.so.8 -l:libacl.so.1 -l:liblzma.so.5 -l:libzstd.so.1 -l:liblz4.so.1 -l:libbz2.so.1.0 -l:libz.so.1)
  # Its zip writer's object shares one with the table of every writer, xar's
  # (libxml2) among them; its sections are per function, and dropping the
  # unused ones drops libxml2.
  target_link_options(provkit_archive_static INTERFACE -Wl,--gc-sections)
endif()

# provkit_link_choice(out_var libs...): the domains' third-party libraries as
# a portable build links them (lib/CMakeLists.txt): yaml-cpp and libarchive
# from their archives, so that they come right after the domain's own archive
# on every link line.
function(provkit_link_choice out_var)
  set(libs ${ARGN})
  if(PROVKIT_PORTABLE)
    list(TRANSFORM libs REPLACE "^yaml-cpp$" provkit_yaml_cpp_static)
    list(TRANSFORM libs REPLACE "^PkgConfig::LIBARCHIVE$" provkit_archive_static)
  endif()
  set(${out_var} ${libs} PARENT_SCOPE)
endfunction()

# provkit_portable(target): a tool linked as above.
function(provkit_portable target)
  if(NOT PROVKIT_PORTABLE)
    return()
  endif()
  target_sources(${target} PRIVATE $<TARGET_OBJECTS:provkit_glibc_floor>)
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc -Wl,--disable-new-dtags)
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")
endfunction()
