/* names_code.h: what test_names expects of names_code.c and names_lib.c. */
#ifndef NAMES_CODE_H
#define NAMES_CODE_H

typedef struct names_expected {
    const char *name;
    unsigned line;       /* in the function's source file */
    unsigned calls;      /* per call of the entry function */
    const void *address; /* the function's code */
} names_expected;

#define NAMES_CODE_FUNCTIONS 4
extern const names_expected names_code_functions[NAMES_CODE_FUNCTIONS];
int names_entry(int x);

#define NAMES_LIB_FUNCTIONS 2
typedef int (*names_lib_entry_fn)(int x, const names_expected **expected);
int names_lib_entry(int x, const names_expected **expected);

#endif
