#ifndef CSONIC_SHIM_H
#define CSONIC_SHIM_H
// libsonic (Debian's libsonic-dev ships no pkg-config file, so the module map links it by name). The plain C API
// is callable from Swift as it is: nothing is wrapped.
#include <sonic.h>
#endif
