// header_cpp.cpp: vor.h compiled as C++ (RAII guard instead of the cleanup attribute).
#include <vor/vor.h>

#include <stdexcept>

extern "C" int header_cpp_work(void);

static void throws() {
    VOR_SCOPE("cpp throws");
    throw std::runtime_error("unwinds through a scope");
}

extern "C" int header_cpp_work(void) {
    VOR_FUNCTION();
    try {
        throws();
    } catch (const std::exception &) {
        return 1; // the guard ended "cpp throws" during unwinding
    }
    return 0;
}
