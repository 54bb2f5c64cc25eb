# vcpkg overlay port for little_loops (header-only). It lives inside the little_loops
# checkout and packages that checkout:
#   vcpkg install "little-loops[yaml]" --overlay-ports=<checkout>/packaging/vcpkg/ports
# LITTLE_LOOPS_SOURCE_DIR (environment; add it to VCPKG_ENV_PASSTHROUGH) selects another
# checkout. A registry copy of this port would fetch a release tag with vcpkg_from_github
# (REPO/REF/SHA512 of that release) instead; everything below stays the same.
if(DEFINED ENV{LITTLE_LOOPS_SOURCE_DIR})
  set(SOURCE_PATH "$ENV{LITTLE_LOOPS_SOURCE_DIR}")
else()
  get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../../../.." ABSOLUTE)
endif()
if(NOT EXISTS "${SOURCE_PATH}/include/little_loops/version.hpp")
  message(FATAL_ERROR "little-loops: ${SOURCE_PATH} is not a little_loops checkout")
endif()

set(VCPKG_BUILD_TYPE release)  # header-only: one configuration is enough

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    yaml LITTLE_LOOPS_WITH_YAML
)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${FEATURE_OPTIONS}
    -DLITTLE_LOOPS_BUILD_TESTS=OFF
    -DLITTLE_LOOPS_BUILD_EXAMPLES=OFF
    -DLITTLE_LOOPS_BUILD_BENCHMARKS=OFF
    -DLITTLE_LOOPS_INSTALL=ON
    -DLITTLE_LOOPS_WITH_TL_EXPECTED=ON
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME little_loops CONFIG_PATH share/cmake/little_loops)

# Header-only: nothing may land in lib/ or debug/.
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug" "${CURRENT_PACKAGES_DIR}/lib"
                    "${CURRENT_PACKAGES_DIR}/share/doc")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
