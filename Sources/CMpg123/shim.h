#ifndef CMPG123_SHIM_H
#define CMPG123_SHIM_H
#include <mpg123.h>
// mpg123 plain C API. Note: mpg123.h renames some functions with object-like macros (mpg123_param is
// mpg123_param2) that Swift does not import: Swift code calls the real names.
#endif
