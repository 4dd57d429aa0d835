/* platform_outputs_none.c: the platform hook of outputs.c (platform.h) for platforms whose
 * programs have no output of their own beyond the files of the environment (Linux).
 *
 * A browser has one, its DevTools tracks: the wasm flavour's layer of the library defines
 * the hook there (wasm/CMakeLists.txt adds it to the library). A link-time hook rather than
 * a registration at load time: in a static library nothing would pull a self-registering
 * object in.
 */
#include "platform.h"

void vor_platform_outputs_open(void) {}
