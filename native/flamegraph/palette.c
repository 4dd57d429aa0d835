/*
 * palette.c: frame colours: the ten palettes, hashed and random choice, differential colours.
 *
 * Each palette is a small box in RGB space; a colour is a position in that box given by three
 * numbers in [0, 1]. Where those numbers come from is the only difference between the modes:
 * - deterministic: bits of the name's FNV-1a hash, so a name has the same colour in every run and
 *   in every graph (handy when comparing two graphs side by side);
 * - random (flamegraph.pl's default look): a splitmix64 generator, seeded from the clock unless
 *   the caller pins a seed, which tests do.
 * Colours carry no meaning in a plain graph; in a differential graph they carry the change.
 */
#include "flamegraph_internal.h"

#include <string.h>

static const char *const palette_names[FLAMEGRAPH_PALETTE_COUNT] = {
    [FLAMEGRAPH_PALETTE_HOT] = "hot",       [FLAMEGRAPH_PALETTE_MEM] = "mem",
    [FLAMEGRAPH_PALETTE_IO] = "io",         [FLAMEGRAPH_PALETTE_RED] = "red",
    [FLAMEGRAPH_PALETTE_GREEN] = "green",   [FLAMEGRAPH_PALETTE_BLUE] = "blue",
    [FLAMEGRAPH_PALETTE_AQUA] = "aqua",     [FLAMEGRAPH_PALETTE_YELLOW] = "yellow",
    [FLAMEGRAPH_PALETTE_PURPLE] = "purple", [FLAMEGRAPH_PALETTE_ORANGE] = "orange",
};

bool flamegraph_palette_from_name(const char *name, flamegraph_palette *out)
{
    if (name == NULL)
        return false;
    for (int i = 0; i < FLAMEGRAPH_PALETTE_COUNT; i++) {
        if (strcmp(name, palette_names[i]) == 0) {
            if (out != NULL)
                *out = (flamegraph_palette)i;
            return true;
        }
    }
    return false;
}

const char *flamegraph_palette_name(flamegraph_palette palette)
{
    if ((unsigned)palette >= (unsigned)FLAMEGRAPH_PALETTE_COUNT)
        return "?";
    return palette_names[palette];
}

/* base + span * v, for v in [0, 1], as a colour channel. */
static uint8_t channel(double base, double span, double v)
{
    double level = base + span * v;
    if (level < 0)
        level = 0;
    if (level > 255)
        level = 255;
    return (uint8_t)(level + 0.5);
}

fg_rgb fg_palette_color(flamegraph_palette palette, double v1, double v2, double v3)
{
    switch (palette) {
    case FLAMEGRAPH_PALETTE_MEM: /* greens to teals */
        return (fg_rgb){ 0, channel(185, 55, v2), channel(0, 200, v1) };
    case FLAMEGRAPH_PALETTE_IO: /* blues, slightly grey */
        return (fg_rgb){ channel(85, 55, v1), channel(85, 55, v1), channel(185, 60, v2) };
    case FLAMEGRAPH_PALETTE_RED:
        return (fg_rgb){ channel(195, 60, v1), channel(55, 75, v1), channel(55, 75, v1) };
    case FLAMEGRAPH_PALETTE_GREEN:
        return (fg_rgb){ channel(55, 55, v1), channel(195, 60, v1), channel(55, 55, v1) };
    case FLAMEGRAPH_PALETTE_BLUE:
        return (fg_rgb){ channel(85, 55, v1), channel(85, 55, v1), channel(200, 55, v1) };
    case FLAMEGRAPH_PALETTE_AQUA:
        return (fg_rgb){ channel(55, 55, v1), channel(160, 60, v1), channel(160, 60, v1) };
    case FLAMEGRAPH_PALETTE_YELLOW:
        return (fg_rgb){ channel(170, 60, v1), channel(170, 60, v1), channel(45, 25, v1) };
    case FLAMEGRAPH_PALETTE_PURPLE:
        return (fg_rgb){ channel(185, 70, v1), channel(75, 65, v1), channel(185, 70, v1) };
    case FLAMEGRAPH_PALETTE_ORANGE:
        return (fg_rgb){ channel(190, 65, v1), channel(85, 70, v1), 0 };
    case FLAMEGRAPH_PALETTE_HOT:
    default: /* red through orange to yellow: green varies most */
        return (fg_rgb){ channel(200, 55, v3), channel(0, 225, v1), channel(0, 60, v2) };
    }
}

fg_rgb fg_palette_color_for_hash(flamegraph_palette palette, uint64_t hash)
{
    /* Three independent 16-bit fields of a well-mixed hash. */
    uint64_t h = hash ^ (hash >> 29);
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    double v1 = (double)(h & 0xFFFF) / 65535.0;
    double v2 = (double)((h >> 16) & 0xFFFF) / 65535.0;
    double v3 = (double)((h >> 32) & 0xFFFF) / 65535.0;
    return fg_palette_color(palette, v1, v2, v3);
}

uint64_t fg_random_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

fg_rgb fg_diff_color(double relative_change)
{
    if (!(relative_change == relative_change)) /* NaN: treat as unchanged */
        relative_change = 0;
    if (relative_change > 1)
        relative_change = 1;
    if (relative_change < -1)
        relative_change = -1;
    /* Fade from white: 255 at no change, 55 at the strongest change. */
    uint8_t faded = channel(255, -200, relative_change < 0 ? -relative_change : relative_change);
    if (relative_change > 0)
        return (fg_rgb){ 255, faded, faded }; /* slower: red */
    if (relative_change < 0)
        return (fg_rgb){ faded, faded, 255 }; /* faster: blue */
    return (fg_rgb){ 255, 255, 255 };
}
