# What `cmake --install` puts under the prefix, and the Debian package CPack makes of it
# (`cpack -G DEB` in the build directory: sv_VERSION_ARCH.deb). The executables install from
# cmd/ with their bash completions (generated there by each executable's --completion bash).
# Nothing installed reads the source tree at run time: the scene schema is compiled in.

# Man pages, compressed as Debian wants them (gzip -9n: no name, no time, reproducible).
file(GLOB SV_MAN_PAGES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/man/*.[1-9])
set(SV_MAN_GZ)
foreach(page ${SV_MAN_PAGES})
  get_filename_component(name ${page} NAME)
  string(REGEX MATCH "[1-9]$" section ${name})
  set(gz ${PROJECT_BINARY_DIR}/man/${name}.gz)
  add_custom_command(OUTPUT ${gz}
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
                     COMMAND sh -c "gzip -9nc \"$1\" > \"$2\"" sh ${page} ${gz}
                     DEPENDS ${page} VERBATIM)
  list(APPEND SV_MAN_GZ ${gz})
  install(FILES ${gz} DESTINATION share/man/man${section})
endforeach()
add_custom_target(sv_man_pages ALL DEPENDS ${SV_MAN_GZ})

# scripts/batch as sv-batch; its job script where sv-batch looks for it (BINDIR/../libexec/sv).
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/batch DESTINATION bin RENAME sv-batch)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/lib/batch-job DESTINATION libexec/sv)
install(FILES ${PROJECT_SOURCE_DIR}/scripts/lib/sv-batch.bash DESTINATION share/bash-completion/completions
        RENAME sv-batch)

# The scene format's schema and the demo drawing (for reading, and for a first run:
# sv-skeleton PREFIX/share/sv/examples/soccer-field.png | sv-fit | ...).
install(FILES ${PROJECT_SOURCE_DIR}/share/schema/scene.schema.json DESTINATION share/sv/schema)
install(FILES ${PROJECT_SOURCE_DIR}/share/examples/soccer-field.png ${PROJECT_SOURCE_DIR}/share/examples/soccer-field.gt.json
        DESTINATION share/sv/examples)

# The licences of all that (sv's, and the demo drawing's), and Debian's changelog.
set(SV_PACKAGE_MAINTAINER "sv maintainers <maintainers@users.noreply.a-seed-0ce5d6ab.example>"
    CACHE STRING "the Debian package's maintainer, NAME <EMAIL>")
string(TIMESTAMP SV_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)  # SOURCE_DATE_EPOCH when set
configure_file(${PROJECT_SOURCE_DIR}/packaging/changelog.in ${PROJECT_BINARY_DIR}/packaging/changelog @ONLY)
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/packaging/changelog.gz
                   COMMAND sh -c "gzip -9nc \"$1\" > \"$2\"" sh ${PROJECT_BINARY_DIR}/packaging/changelog
                           ${PROJECT_BINARY_DIR}/packaging/changelog.gz
                   DEPENDS ${PROJECT_BINARY_DIR}/packaging/changelog VERBATIM)
add_custom_target(sv_changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/packaging/changelog.gz)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright ${PROJECT_BINARY_DIR}/packaging/changelog.gz
        DESTINATION share/doc/sv)

# The Debian package.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sv)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "the sv authors")
set(CPACK_PACKAGE_CONTACT "${SV_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "line drawings to drawing-robot strokes")
set(CPACK_PACKAGE_DESCRIPTION
    "sv turns a raster line drawing (an icon, a sketch, a glyph) into a small set
of lines, arcs and circles, and those into the command stream of the Doodlebot
drawing robot, ordered so the robot draws fast. It is a set of Unix filters
over one JSON scene document (sv-skeleton, sv-fit, sv-route, sv-simulate);
every stage can record its result in a content-addressed revision store
(sv-commit), and the inspection and editing tools are served to agents on the
command line (sv-diagnose, sv-edit) and over the Model Context Protocol
(sv-mcp). sv-batch runs the pipeline on many drawings through GNU parallel.
Exports SVG, PNG, G-code and the robot's command stream.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # sv_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${SV_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION graphics)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # dpkg-shlibdeps: the libraries the executables load
# Besides those: GNU parallel for sv-batch; libtiff, which sv-skeleton loads when a TIFF comes
# (dlopen, so dpkg-shlibdeps cannot see it); rsync for sv-batch's remote hosts.
string(REGEX REPLACE "^libtiff\\.so\\.([0-9]+)$" "libtiff\\1" SV_LIBTIFF_PACKAGE "${SV_LIBTIFF_SONAME}")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "parallel")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "${SV_LIBTIFF_PACKAGE}")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "rsync")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
