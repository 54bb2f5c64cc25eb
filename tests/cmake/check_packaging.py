#!/usr/bin/env python3
# little_loops — static checks of the vcpkg port and the Conan recipe (neither tool runs here)
# SPDX-License-Identifier: MIT
"""Usage: check_packaging.py <checkout> <project version>

Checks what can be checked without vcpkg or Conan: the port's vcpkg.json is valid JSON with
the project's version, the yaml feature and the dependencies the CMake package looks for;
portfile.cmake passes the options the consumer test uses; the Conan recipe and its
test_package are valid Python declaring the with_yaml option and the same CMake names."""
import ast
import json
import os
import sys


def fail(message):
    print(f"check_packaging: {message}", file=sys.stderr)
    sys.exit(1)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def main(root, version):
    port = os.path.join(root, "packaging", "vcpkg", "ports", "little-loops")
    try:
        manifest = json.loads(read(os.path.join(port, "vcpkg.json")))
    except (OSError, ValueError) as e:
        fail(f"vcpkg.json: {e}")
    if manifest.get("name") != "little-loops":
        fail("vcpkg.json: name must be little-loops")
    if manifest.get("version-semver") != version:
        fail(f"vcpkg.json: version-semver {manifest.get('version-semver')!r} != project {version!r}")
    deps = {d if isinstance(d, str) else d.get("name") for d in manifest.get("dependencies", [])}
    for needed in ("fmt", "nlohmann-json", "re2", "tl-expected", "vcpkg-cmake", "vcpkg-cmake-config"):
        if needed not in deps:
            fail(f"vcpkg.json: missing dependency {needed}")
    yaml = manifest.get("features", {}).get("yaml", {})
    if "yaml-cpp" not in yaml.get("dependencies", []):
        fail("vcpkg.json: feature yaml must depend on yaml-cpp")

    portfile = read(os.path.join(port, "portfile.cmake"))
    for needed in ("yaml LITTLE_LOOPS_WITH_YAML", "-DLITTLE_LOOPS_BUILD_TESTS=OFF",
                   "-DLITTLE_LOOPS_BUILD_EXAMPLES=OFF", "vcpkg_cmake_install()",
                   "PACKAGE_NAME little_loops CONFIG_PATH share/cmake/little_loops",
                   "vcpkg_install_copyright"):
        if needed not in portfile:
            fail(f"portfile.cmake: expected {needed!r}")
    usage = read(os.path.join(port, "usage"))
    if "find_package(little_loops CONFIG REQUIRED)" not in usage:
        fail("usage: must show find_package(little_loops CONFIG REQUIRED)")

    conan = os.path.join(root, "packaging", "conan")
    for name in ("conanfile.py", os.path.join("test_package", "conanfile.py")):
        try:
            ast.parse(read(os.path.join(conan, name)), filename=name)
        except (OSError, SyntaxError) as e:
            fail(f"{name}: {e}")
    recipe = read(os.path.join(conan, "conanfile.py"))
    for needed in ('"with_yaml": [True, False]', 'package_type = "header-library"',
                   '"cmake_file_name", "little_loops"', '"little_loops::little_loops"',
                   '"little_loops::posix"', '"little_loops::yaml"', "self.info.clear()",
                   "check_min_cppstd(self, 20)"):
        if needed not in recipe:
            fail(f"conanfile.py: expected {needed!r}")
    test_cmake = read(os.path.join(conan, "test_package", "CMakeLists.txt"))
    if "tests/cmake/consumer/main.cpp" not in test_cmake:
        fail("test_package/CMakeLists.txt: must build the shared consumer source")
    print(f"packaging recipes OK (vcpkg port and Conan recipe, version {version})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail("usage: check_packaging.py <checkout> <version>")
    main(sys.argv[1], sys.argv[2])
