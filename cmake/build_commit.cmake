# Writes OUT, a source file naming the commit sv is built from: the commit's id, "-dirty" when a
# tracked file differs from it, "unknown" outside a git checkout of sv (a source tarball, or one
# unpacked inside another repository). Run at every build; OUT is rewritten only when it changes,
# so an unchanged commit recompiles nothing. --no-optional-locks: the build never takes the index lock.
set(commit unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SRC} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE r1 ERROR_QUIET)
  if(r1 EQUAL 0)
    get_filename_component(top "${top}" REALPATH)
    get_filename_component(src "${SRC}" REALPATH)
  endif()
  if(r1 EQUAL 0 AND top STREQUAL src)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SRC} rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE id OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE r2 ERROR_QUIET)
    execute_process(COMMAND ${GIT_EXECUTABLE} --no-optional-locks -C ${SRC} status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes RESULT_VARIABLE r3 ERROR_QUIET)
    if(r2 EQUAL 0 AND id)
      set(commit ${id})
      if(NOT r3 EQUAL 0 OR changes)
        set(commit ${id}-dirty)
      endif()
    endif()
  endif()
endif()
set(text "// Generated at build time by cmake/build_commit.cmake.\nnamespace sv {\nextern const char kBuildCommit[];\nconst char kBuildCommit[] = \"${commit}\";\n}  // namespace sv\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
