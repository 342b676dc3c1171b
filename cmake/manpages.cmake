# Man pages generated at build time from each tool's own --help and --version
# (help2man, Debian package help2man), so the page never drifts from the tool.
# --help-all (provkit/cli/convention.hpp) adds a section per subcommand with its options.
find_program(HELP2MAN help2man REQUIRED)

set(PROVKIT_MAN_PAGES)
function(provkit_man_page target summary help_option version_option)
  set(page ${CMAKE_BINARY_DIR}/man/${target}.1)
  add_custom_command(
    OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section=1 --name=${summary}
            --help-option=${help_option} --version-option=${version_option}
            --output=${page} $<TARGET_FILE:${target}>
    DEPENDS ${target}
    COMMENT "man page for ${target}")
  set(PROVKIT_MAN_PAGES ${PROVKIT_MAN_PAGES} ${page} PARENT_SCOPE)
endfunction()

provkit_man_page(hf-fetch "fetch pinned, sha256-verified Hugging Face Hub checkpoints" --help-all --version)
provkit_man_page(envcheck "prove a box can run an inference engine before it starts" --help --version)
provkit_man_page(envbuild "build and verify Python environments from a hashed lock" --help-all --version)
provkit_man_page(cc-shim "a gcc-compatible C compiler front for zig cc" --shim-help --shim-version)

add_custom_target(manpages ALL DEPENDS ${PROVKIT_MAN_PAGES})
install(FILES ${PROVKIT_MAN_PAGES} DESTINATION share/man/man1)
