# The README's two commands (make demo, make test) and the rest. Every target that
# builds first runs scripts/setup.sh, which installs what is missing (Debian packages,
# npm packages from the lockfile) and does nothing when all is there.
#
#   make            build both flavours (build/native, build/wasm, build/site)
#   make test       build, then every test: native, ASan+UBSan, TSan, wasm, node, Chromium
#   make demo       build, then run the demo (see README)
#   make bench      build, then print the benchmarks (docs/PERFORMANCE.md records them)
#   make install    install headers, libraries, `vor`, the site, pkg-config and CMake files of both
#                   flavours (PREFIX=/usr/local; wasm: lib/wasm32-emscripten, share/vor/wasm)
#   make clean      remove build/
# Configure lines live in CMakePresets.json (native, wasm, asan, tsan), used here and by scripts/.
JOBS ?= 2
PREFIX ?= /usr/local

.PHONY: all setup build native wasm test demo bench install clean

all: build

setup:
	@sh scripts/setup.sh

native: setup
	@mkdir -p build
	@cmake --preset native > build/native-configure.log 2>&1 \
	  || { cat build/native-configure.log; exit 1; }
	@cmake --build build/native -j $(JOBS)

wasm: setup
	@sh scripts/build-wasm.sh

build: native wasm

test: setup
	@sh scripts/test.sh

demo: build
	@sh scripts/demo.sh

bench: build
	@sh scripts/bench.sh

install: build
	@cmake --install build/native --prefix $(PREFIX)
	@cmake --install build/wasm --prefix $(PREFIX)

clean:
	rm -rf build
