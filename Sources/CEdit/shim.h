#ifndef CEDIT_SHIM_H
#define CEDIT_SHIM_H
#include <stdio.h>
// libedit's readline-compatible interface: readline(), add_history(), read_history(), write_history().
// These are plain C functions Swift can call directly; histedit.h's el_set is variadic and not used.
#include <editline/readline.h>
#endif
