# Real projects built from their own Debian source with gcc and with cc-shim
# (tests/integration/cc-shim-projects/): each project's own build system and
# test suite, their results, warnings, configure findings and files compared.
# One ctest per project script, found by glob; label cc-shim-projects runs
# them alone (ctest -L cc-shim-projects). The sources come once from Debian's
# archive (fixture cc-shim-sources) and are kept in the build tree.
set(CC_SHIM_PROJECTS_DIR ${CMAKE_CURRENT_SOURCE_DIR}/integration/cc-shim-projects)
add_test(NAME "cc-shim-projects: fetch sources (apt-get source)" COMMAND bash ${CC_SHIM_PROJECTS_DIR}/fetch-sources.sh)
set_tests_properties("cc-shim-projects: fetch sources (apt-get source)" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV}" FIXTURES_SETUP cc-shim-sources LABELS cc-shim-projects TIMEOUT 600)
file(GLOB CC_SHIM_PROJECT_SCRIPTS CONFIGURE_DEPENDS ${CC_SHIM_PROJECTS_DIR}/*.sh)
list(REMOVE_ITEM CC_SHIM_PROJECT_SCRIPTS ${CC_SHIM_PROJECTS_DIR}/lib.sh ${CC_SHIM_PROJECTS_DIR}/fetch-sources.sh)
foreach(script ${CC_SHIM_PROJECT_SCRIPTS})
  get_filename_component(project ${script} NAME_WE)
  add_test(NAME "cc-shim-projects: ${project}" COMMAND bash ${script})
  # Each builds with make -j2: two slots of ctest -j. Every step inside has a
  # limit scaled by the load (lib.sh, step); TIMEOUT is only the last guard.
  set_tests_properties("cc-shim-projects: ${project}" PROPERTIES
    ENVIRONMENT "${PROVKIT_TEST_ENV}" FIXTURES_REQUIRED "cc-shim-zig;cc-shim-warm;cc-shim-sources"
    LABELS cc-shim-projects PROCESSORS 2 TIMEOUT 3600)
endforeach()
