"""setup.py: `pip install ./python --no-build-isolation` (setuptools from Debian; no PyPI).

The extension vor._vor links libvor.so, as the CMake build does (one vor runtime per
process, shared with native extensions that link libvor). pip builds it from this
repository: libvor.so comes from the project's CMake build of the library alone (into
setuptools' build folder, with the Debian packages scripts/setup.sh installs), or, when
VOR_LIBRARY_DIR names a folder holding a built libvor.so.0 (e.g. build/native/lib after
`make`), from there. VOR_SOURCE_DIR names the repository when this folder was copied
elsewhere. Either way the library is copied into the installed package beside
the extension, which finds it through RPATH $ORIGIN: the installed package needs nothing
from the build tree.
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.environ.get("VOR_SOURCE_DIR") or os.path.dirname(HERE)  # the repository holding core/
LIBRARY = "libvor.so.0"


def fail(message):
    sys.exit(f"vor setup.py: {message}")


class BuildWithLibvor(build_ext):
    """Builds (or finds) libvor.so.0, links the extension with it, and ships it."""

    def library_dir(self):
        given = os.environ.get("VOR_LIBRARY_DIR")
        if given:
            if not os.path.exists(os.path.join(given, LIBRARY)):
                fail(f"VOR_LIBRARY_DIR={given} holds no {LIBRARY}")
            return os.path.abspath(given)
        if not os.path.exists(os.path.join(REPO, "core", "CMakeLists.txt")):
            fail(f"the vor sources are not beside {HERE} (core/ is missing); install from the repository")
        build = os.path.abspath(os.path.join(self.build_temp, "libvor"))
        configure = ["cmake", "-S", REPO, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DVOR_BUILD_TOOLS=OFF",
                     "-DVOR_BUILD_TESTS=OFF", "-DVOR_BUILD_BENCH=OFF"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        try:
            subprocess.run(configure, check=True)
            subprocess.run(["cmake", "--build", build, "--target", "vor_shared", "-j", os.environ.get("JOBS", "2")],
                           check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            fail(f"building libvor with CMake failed ({e}); `sh scripts/setup.sh` installs what it needs")
        return os.path.join(build, "lib")

    def run(self):
        libdir = self.library_dir()
        for ext in self.extensions:
            ext.library_dirs.append(libdir)
        super().run()
        # Beside the extension, under the name its DT_NEEDED entry asks for.
        target = os.path.join(self.build_lib, "vor", LIBRARY)
        shutil.copyfile(os.path.realpath(os.path.join(libdir, LIBRARY)), target)
        if self.inplace:
            shutil.copyfile(target, os.path.join(HERE, "vor", LIBRARY))


extension = Extension(
    "vor._vor",
    sources=sorted(glob.glob(os.path.join("src", "*.c"))),
    include_dirs=[os.path.join(REPO, "core", "include")],
    libraries=["vor"],
    extra_compile_args=["-std=c11", "-D_GNU_SOURCE", "-fvisibility=hidden", "-Wno-missing-field-initializers"],
    extra_link_args=["-Wl,-rpath,$ORIGIN"],
)

setup(ext_modules=[extension], cmdclass={"build_ext": BuildWithLibvor})
