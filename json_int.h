/*
 * json_int.h: layer 2, private to the JSON files (json.c, json_scan.c,
 * json_out.c, utf8.c, jsonrpc.c): the lexical steps they share.  Includes
 * json.h.
 */
#ifndef JSON_INT_H
#define JSON_INT_H

#include "json.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

bool	 json_valid_number(const char *, size_t);
bool	 json_valid_primitive(const char *, size_t);
bool	 json_raw_is_int(const char *, size_t);
bool	 json_hex4(const char *, unsigned long *);
size_t	 json_check_value(const char *, size_t, size_t, size_t *, size_t *);
size_t	 json_skip_string(const char *, size_t, size_t);
size_t	 json_primitive_end(const char *, size_t, size_t);

static inline size_t
skip_space(const char *s, size_t i, size_t n)
{
	while (i < n && json_space(s[i]))
		i++;
	return i;
}

/* The end of s[0..n) without trailing white space. */
static inline size_t
back_space(const char *s, size_t n)
{
	while (n > 0 && json_space(s[n - 1]))
		n--;
	return n;
}

/* Sixteen bytes compared at once: SSE2 on x86-64, NEON on ARM. */
typedef unsigned char bytes16 __attribute__((vector_size(16)));

/*
 * Which byte of a block compared is the first that matched (0xff); 16
 * when none did.  On x86-64 one movemask; elsewhere two 64-bit halves.
 * The block comes by pointer: a vector passed by value has no ABI on
 * targets without vector registers (32-bit PowerPC: -Wpsabi), and the
 * function is inlined anyway.
 */
static inline size_t
first_match(const bytes16 *hit)
{
#ifdef __SSE2__
	unsigned int m = (unsigned int)_mm_movemask_epi8((__m128i)*hit);

	return m != 0 ? (size_t)__builtin_ctz(m) : 16;
#else
	uint64_t half[2];

	memcpy(half, hit, sizeof(half));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return half[0] != 0 ? (size_t)__builtin_clzll(half[0]) >> 3 :
	    half[1] != 0 ? 8 + ((size_t)__builtin_clzll(half[1]) >> 3) : 16;
#else
	return half[0] != 0 ? (size_t)__builtin_ctzll(half[0]) >> 3 :
	    half[1] != 0 ? 8 + ((size_t)__builtin_ctzll(half[1]) >> 3) : 16;
#endif
#endif
}

#endif /* JSON_INT_H */
