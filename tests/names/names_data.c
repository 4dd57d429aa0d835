/* names_data.c: a shared object with DWARF (-g) but no code: its compile unit has no
 * address ranges. */
const int names_data_value = 42;
