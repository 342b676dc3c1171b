# `cpack -G DEB` in the build tree makes provkit_<version>_<arch>.deb. Its
# Depends line is computed by dpkg-shlibdeps from the binaries, so it names
# the Debian runtime packages (libcurl4, libyaml-cpp0.7, libarchive13, ...).
set(CPACK_PACKAGE_NAME provkit)
set(CPACK_PACKAGE_VENDOR provkit)
set(CPACK_PACKAGE_CONTACT "provkit maintainers <provkit@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "provision LLM inference boxes: hf-fetch, envcheck, envbuild, cc-shim")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
include(CPack)
