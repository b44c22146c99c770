# What `cmake --install` and `cpack -G DEB` deliver beyond the binaries:
# find_package(tsctl) files, tsctl.pc, bash and zsh completion, and the
# Debian package's metadata.
include(CMakePackageConfigHelpers)

set(TSCTL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tsctl)
install(EXPORT tsctlTargets NAMESPACE tsctl:: DESTINATION ${TSCTL_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tsctlConfig.cmake.in
  ${CMAKE_BINARY_DIR}/tsctlConfig.cmake INSTALL_DESTINATION ${TSCTL_CMAKE_DIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tsctlConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tsctlConfig.cmake ${CMAKE_BINARY_DIR}/tsctlConfigVersion.cmake
  DESTINATION ${TSCTL_CMAKE_DIR} COMPONENT dev)
configure_file(${CMAKE_CURRENT_LIST_DIR}/tsctl.pc.in ${CMAKE_BINARY_DIR}/tsctl.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tsctl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# Shell completion, generated from the built tsctl's --help (so it lists every
# subcommand and flag of this build): scripts/gen_completions.py.
find_program(TSCTL_TOOL_PYTHON NAMES python3 REQUIRED)
set(_tsctl_completions ${CMAKE_BINARY_DIR}/completions/tsctl.bash ${CMAKE_BINARY_DIR}/completions/_tsctl)
add_custom_command(OUTPUT ${_tsctl_completions}
  COMMAND ${TSCTL_TOOL_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/gen_completions.py $<TARGET_FILE:tsctl_app> ${CMAKE_BINARY_DIR}/completions
  DEPENDS tsctl_app ${PROJECT_SOURCE_DIR}/scripts/gen_completions.py
  COMMENT "Generating bash and zsh completion from tsctl --help")
add_custom_target(tsctl_completions ALL DEPENDS ${_tsctl_completions})
install(FILES ${CMAKE_BINARY_DIR}/completions/tsctl.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME tsctl)
install(FILES ${CMAKE_BINARY_DIR}/completions/_tsctl DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

# cpack -G DEB in the build folder: one package with the binary, libtsctl,
# the plugins, headers, CMake/pkg-config files, man pages and completions.
set(CPACK_PACKAGE_NAME tsctl)
set(CPACK_PACKAGE_VENDOR "tsctl")
set(CPACK_PACKAGE_CONTACT "tsctl maintainers <tsctl@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "command-line toolkit for TorchScript archives")
set(CPACK_PACKAGE_DESCRIPTION "tsctl inspects, diffs, stamps, validates and benchmarks the ZIP archives torch.jit.save writes, prints their graphs and code, and makes new ones (trace, script).")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# Dependencies: dpkg-shlibdeps reads them off every ELF file (libtorch1.13,
# libpython3.x, libzip... as Debian names them). A LibTorch from a wheel belongs
# to no package: then only the system libraries are declared, and the package
# needs that wheel where it was at build time (its path is in the plugin's RUNPATH).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/lib)
if(TSCTL_TORCH_WHEEL_ROOT)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, zlib1g, libpugixml1v5")
endif()
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "graphviz")
include(CPack)
