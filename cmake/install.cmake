# SPDX-License-Identifier: GPL-2.0-only
# What `cmake --install` puts where, and the Debian package of it (cpack -G DEB, in the build
# directory): the binary in sbin/ (an administrator's tool: it needs root), the systemd unit
# with that path filled in, the man page, bash completion, the documentation with an example
# configuration and the unit's drop-in for metrics_listen.
include(GNUInstallDirs)

add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/jankwatch.8.gz
		   COMMAND gzip -9n -c ${CMAKE_SOURCE_DIR}/docs/jankwatch.8 >
			   ${CMAKE_BINARY_DIR}/jankwatch.8.gz
		   DEPENDS ${CMAKE_SOURCE_DIR}/docs/jankwatch.8)
add_custom_target(jankwatch_man ALL DEPENDS ${CMAKE_BINARY_DIR}/jankwatch.8.gz)

install(TARGETS jankwatch RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
# The unit names the binary where it is installed: the prefix of the install itself (--prefix,
# the package's /usr), not the one configured.
install(CODE "
	set(JW_SBIN_DIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SBINDIR}\")
	set(JW_DOC_DIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\")
	configure_file(${CMAKE_SOURCE_DIR}/scripts/jankwatch.service.in
		       ${CMAKE_BINARY_DIR}/install/jankwatch.service @ONLY)")
# systemd reads units from lib/systemd/system under /usr and /usr/local alike.
install(FILES ${CMAKE_BINARY_DIR}/install/jankwatch.service DESTINATION lib/systemd/system)
install(FILES ${CMAKE_BINARY_DIR}/jankwatch.8.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
install(FILES ${CMAKE_SOURCE_DIR}/scripts/jankwatch.bash-completion
	DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME jankwatch)
# The README with docs/ beside it, as in the tree, so that its links and pictures work.
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
	FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
install(FILES ${CMAKE_SOURCE_DIR}/scripts/jankwatch.conf.example
	DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples RENAME jankwatch.conf)
install(FILES ${CMAKE_SOURCE_DIR}/scripts/jankwatch-metrics-listen.conf
	DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples RENAME metrics-listen.conf)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME jankwatch)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "main-thread jank monitor for unmodified Linux processes, with eBPF")
set(CPACK_PACKAGE_DESCRIPTION
    "jankwatch attaches to running processes, times every task their event loop dispatches \
inside the kernel, and when one runs long records where the time went: user and kernel \
stacks, what it waited on and what woke it.")
set(CPACK_PACKAGE_CONTACT "jankwatch developers <jankwatch@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The libraries' packages (libbpf1, libdw1, libelf1, ...) from the binary's own needs.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Loaded with dlopen() when DEBUGINFOD_URLS is set: debug files of stripped binaries.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS libdebuginfod1)
set(CPACK_STRIP_FILES ON)
include(CPack)
