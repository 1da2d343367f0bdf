# What `cmake --install` puts under the prefix:
#   bin/cudagraph-tidy                    the tool (clang-tidy with the checks)
#   lib/cudagraph-tidy/CudaGraphTidyModule.so
#                                         the plugin for clang-tidy-19 --load
#   include/cudagraph/annotations.h       CUDAGRAPH_CAPTURE_SAFE for sources
#   share/man/man1/cudagraph-tidy.1       the manual page
#   share/doc/cudagraph-tidy/             README and docs/ (SARIF help links
#                                         point at checks/*.md here)
#   bin/cudagraph-run, cudagraph-confirm, cudagraph-symbolize,
#   cudagraph-replay-events, lib/libcudagraph-inject.so
#                                         the runtime harness, when built
include(GNUInstallDirs)

if(TARGET cudagraph-tidy)
  install(TARGETS cudagraph-tidy RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(TARGETS CudaGraphTidyModule
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/cudagraph-tidy)
endif()
install(FILES include/cudagraph/annotations.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cudagraph)
install(FILES docs/cudagraph-tidy.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
  PATTERN "cudagraph-tidy.1" EXCLUDE)

if(TARGET cudagraph-replay-events)
  set(harness_share ${CMAKE_INSTALL_DATADIR}/cudagraph-tidy)
  install(TARGETS cudagraph-replay-events RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  if(TARGET cudagraph-inject)
    install(TARGETS cudagraph-inject LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
  install(PROGRAMS ${CMAKE_BINARY_DIR}/bin/cudagraph-run
    DESTINATION ${CMAKE_INSTALL_BINDIR})
  # The Python tools keep the layout they find their modules and the
  # catalog by; small launchers in bin/ run them.
  install(PROGRAMS runtime-harness/confirm/cudagraph-confirm
    DESTINATION ${harness_share}/runtime-harness/confirm)
  install(PROGRAMS runtime-harness/tools/cudagraph-symbolize
    DESTINATION ${harness_share}/runtime-harness/tools)
  install(DIRECTORY runtime-harness/python/cudagraph_harness
    DESTINATION ${harness_share}/runtime-harness/python
    PATTERN "__pycache__" EXCLUDE)
  install(FILES catalog/Hazards.def catalog/catalog.py catalog/CatalogNames.h
    DESTINATION ${harness_share}/catalog)
  foreach(tool confirm/cudagraph-confirm tools/cudagraph-symbolize)
    get_filename_component(tool_name ${tool} NAME)
    set(launcher ${CMAKE_BINARY_DIR}/install-launchers/${tool_name})
    file(WRITE ${launcher}
      "#!/bin/sh\n"
      "# Runs ${tool_name} from the installed share directory.\n"
      "here=$(dirname \"$(readlink -f \"$0\")\")\n"
      "exec python3 \"$here/../${harness_share}/runtime-harness/${tool}\" \"$@\"\n")
    install(PROGRAMS ${launcher} DESTINATION ${CMAKE_INSTALL_BINDIR})
  endforeach()
endif()
