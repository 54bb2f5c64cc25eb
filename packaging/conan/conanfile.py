# little_loops — Conan 2 recipe (header-only)
# SPDX-License-Identifier: MIT
#
#   conan create packaging/conan --build=missing [-o "little_loops/*:with_yaml=True"]
#
# Packages the checkout this file lives in: include/ and LICENSE. The CMake names match the
# project's own install: find_package(little_loops CONFIG REQUIRED [COMPONENTS yaml]),
# targets little_loops::little_loops, little_loops::posix, little_loops::yaml.
import os
import re

from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.build import check_min_cppstd, valid_min_cppstd
from conan.tools.files import copy, load
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


class LittleLoopsConan(ConanFile):
    name = "little_loops"
    description = ("Header-only C++20 library that runs loops as data: states with actions, "
                   "evaluators and routes, executed by a finite-state machine.")
    license = "MIT"
    homepage = "https://example.invalid/little_loops"
    url = "https://example.invalid/little_loops"
    topics = ("fsm", "state-machine", "automation", "agents", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {"with_yaml": [True, False], "with_tl_expected": [True, False]}
    default_options = {"with_yaml": False, "with_tl_expected": True}
    no_copy_source = True

    def set_version(self):
        text = load(self, os.path.join(ROOT, "include", "little_loops", "version.hpp"))
        parts = [re.search(rf"#define LITTLE_LOOPS_VERSION_{p} (\d+)", text).group(1)
                 for p in ("MAJOR", "MINOR", "PATCH")]
        self.version = ".".join(parts)

    def export_sources(self):
        copy(self, "include/*", src=ROOT, dst=self.export_sources_folder)
        copy(self, "LICENSE", src=ROOT, dst=self.export_sources_folder)

    def layout(self):
        basic_layout(self, src_folder=".")

    def requirements(self):
        # transitive_headers: our public headers include theirs.
        self.requires("nlohmann_json/3.11.3", transitive_headers=True)
        self.requires("fmt/10.2.1", transitive_headers=True)
        self.requires("re2/20230301", transitive_headers=True)
        if self.options.with_tl_expected:
            self.requires("tl-expected/1.1.0", transitive_headers=True)
        if self.options.with_yaml:
            self.requires("yaml-cpp/0.8.0", transitive_headers=True)

    def package_id(self):
        self.info.clear()

    def validate(self):
        check_min_cppstd(self, 20)
        if not self.options.with_tl_expected and not valid_min_cppstd(self, 23):
            raise ConanInvalidConfiguration(
                "little_loops needs tl-expected below C++23: keep with_tl_expected=True")

    def package(self):
        copy(self, "LICENSE", src=self.source_folder, dst=os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", src=os.path.join(self.source_folder, "include"),
             dst=os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "little_loops")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []

        core = self.cpp_info.components["core"]
        core.set_property("cmake_target_name", "little_loops::little_loops")
        core.requires = ["nlohmann_json::nlohmann_json", "fmt::fmt", "re2::re2"]
        if self.options.with_tl_expected:
            core.requires.append("tl-expected::tl-expected")
        core.bindirs = []
        core.libdirs = []

        posix = self.cpp_info.components["posix"]
        posix.set_property("cmake_target_name", "little_loops::posix")
        posix.requires = ["core"]
        posix.bindirs = []
        posix.libdirs = []

        if self.options.with_yaml:
            yaml = self.cpp_info.components["yaml"]
            yaml.set_property("cmake_target_name", "little_loops::yaml")
            yaml.requires = ["core", "yaml-cpp::yaml-cpp"]
            yaml.bindirs = []
            yaml.libdirs = []
