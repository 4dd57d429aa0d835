"""The package installed, away from the build tree: by `make install` (cmake --install) and
by `pip install ./python --no-build-isolation`. Each installed copy must load its own
libvor (not the build tree's) and record a capture."""

import os
import shutil
import subprocess
import sys
import sysconfig

from conftest import BUILD_DIR, SOURCE_DIR

CHECK = r"""
import os, sys, vor
os.environ["VOR_RECORD"] = sys.argv[1]
os.environ["VOR_RECORD_FLAME"] = "1"
vor.enable()
with vor.scope("installed"):
    pass
vor.frame_mark()
vor.shutdown()
libs = {line.split()[-1] for line in open("/proc/self/maps") if "libvor.so" in line}
print(vor.__file__)
print(*sorted(libs))
print(sum(1 for f in vor.Reader(sys.argv[1]) for s in f.scopes if s.name == "installed"))
"""


def check_installed(site_dir, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOR_")}
    env["PYTHONPATH"] = site_dir
    capture = str(tmp_path / "installed.vor")
    out = subprocess.run([sys.executable, "-c", CHECK, capture], env=env, cwd="/", capture_output=True, text=True,
                         check=True).stdout.split("\n")
    return out[0], out[1], out[2]


def test_cmake_install_puts_a_working_package_beside_the_library(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", str(prefix)], check=True, capture_output=True)
    version = "%d.%d" % sys.version_info[:2]
    place = "dist-packages" if "deb_system" in sysconfig.get_scheme_names() else "site-packages"
    site_dir = str(prefix / "lib" / f"python{version}" / place)
    module, libs, count = check_installed(site_dir, tmp_path)
    assert module.startswith(site_dir)
    assert libs.startswith(str(prefix / "lib")) and " " not in libs  # the installed libvor, only it
    assert count == "1"


def test_pip_install_ships_libvor_in_the_package(tmp_path):
    source = tmp_path / "src"
    shutil.copytree(os.path.join(SOURCE_DIR, "python"), source,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "libvor.so.0"))
    target = tmp_path / "site"
    env = dict(os.environ, VOR_SOURCE_DIR=SOURCE_DIR, VOR_LIBRARY_DIR=os.path.join(BUILD_DIR, "lib"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                    "--target", str(target), str(source)], env=env, check=True, capture_output=True)
    module, libs, count = check_installed(str(target), tmp_path)
    assert module.startswith(str(target))
    assert libs == str(target / "vor" / "libvor.so.0")
    assert count == "1"
