# Installs the library, headers and CLI, and exports kafel::kafel for find_package(kafel).
# The consumer test in tests/consumer builds against an install prefix.
include(CMakePackageConfigHelpers)
install(TARGETS kafel EXPORT kafelTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kafel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/kafel/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kafel)
if(TARGET kafel_cli)
  install(TARGETS kafel_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT kafelTargets NAMESPACE kafel:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kafel)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kafelConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kafelConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kafel)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kafelConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kafelConfig.cmake ${PROJECT_BINARY_DIR}/kafelConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kafel)
