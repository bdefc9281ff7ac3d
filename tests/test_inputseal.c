/* tests/test_inputseal.c - a request's input sealed in its pool slot (runtime/inputseal.h):
 *
 *   - encrypted and authenticated-only both open to the same bytes; encrypted leaves no
 *     plaintext in the slot, authenticated-only leaves the input as it was;
 *   - refused (-EBADMSG), in both modes: a flipped bit of the input, of the tag, of the
 *     nonce's random part; another key; another request id (the slot's older input,
 *     replayed whole); another length; a trailer written for another request and its id
 *     rewritten;
 *   - two seals of one input differ (random nonces), and an empty input seals too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "runtime/inputseal.h"

#define LEN 4096

static uint8_t key[SYM_INPUT_KEY], other[SYM_INPUT_KEY];
static uint8_t input[LEN], slot[LEN + SYM_INPUT_TRAILER], copy[LEN + SYM_INPUT_TRAILER];

static void fill(void)
{
	for (size_t i = 0; i < LEN; i++)
		input[i] = (uint8_t)(i * 7 + 3);
	memcpy(slot, input, LEN);
}

static void both_modes_open(void **state)
{
	(void)state;
	sym_input_keygen(key);
	for (int enc = 0; enc < 2; enc++) {
		fill();
		sym_input_seal(key, 0x1234567800000007ull, slot, LEN, enc);
		if (enc)
			assert_memory_not_equal(slot, input, LEN);
		else
			assert_memory_equal(slot, input, LEN);
		assert_int_equal(sym_input_open(key, 0x1234567800000007ull, slot, LEN, enc), 0);
		assert_memory_equal(slot, input, LEN);
	}
}

/* Seals input for id, lets `spoil` change the copy, and expects it refused. */
static void refused(bool enc, uint64_t id, void (*spoil)(uint8_t *s), uint64_t open_id, size_t open_len,
		    const uint8_t *open_key)
{
	fill();
	sym_input_seal(key, id, slot, LEN, enc);
	memcpy(copy, slot, sizeof(slot));
	if (spoil)
		spoil(copy);
	assert_int_equal(sym_input_open(open_key, open_id, copy, open_len, enc), -EBADMSG);
	/* the unspoiled seal still opens */
	assert_int_equal(sym_input_open(key, id, slot, LEN, enc), 0);
	assert_memory_equal(slot, input, LEN);
}

static void flip_input(uint8_t *s) { s[LEN / 2] ^= 0x10; }
static void flip_tag(uint8_t *s) { s[LEN + 3] ^= 1; }
static void flip_nonce(uint8_t *s) { s[LEN + 16 + 5] ^= 0x80; }

static void every_change_refused(void **state)
{
	(void)state;
	sym_input_keygen(key);
	sym_input_keygen(other);
	for (int enc = 0; enc < 2; enc++) {
		refused(enc, 42, flip_input, 42, LEN, key);
		refused(enc, 42, flip_tag, 42, LEN, key);
		refused(enc, 42, flip_nonce, 42, LEN, key);
		refused(enc, 42, NULL, 42, LEN, other);      /* another key */
		refused(enc, 42, NULL, 43, LEN, key);        /* another request's id */
		refused(enc, 42, NULL, 42, LEN - 1, key);    /* shorter */
	}
}

/* The slot's older input (request 5), replayed whole when request 6 is read, with the
 * id in its nonce rewritten to 6: the tag does not hold. */
static void replay_refused(void **state)
{
	(void)state;
	sym_input_keygen(key);
	for (int enc = 0; enc < 2; enc++) {
		fill();
		sym_input_seal(key, 5, slot, LEN, enc);
		memcpy(copy, slot, sizeof(slot));
		assert_int_equal(sym_input_open(key, 6, copy, LEN, enc), -EBADMSG);
		memcpy(copy, slot, sizeof(slot));
		copy[LEN + 16 + 16] = 6; /* the id's low byte */
		assert_int_equal(sym_input_open(key, 6, copy, LEN, enc), -EBADMSG);
	}
}

static void fresh_nonces(void **state)
{
	(void)state;
	sym_input_keygen(key);
	uint8_t a[64 + SYM_INPUT_TRAILER] = { 0 }, b[64 + SYM_INPUT_TRAILER] = { 0 };
	sym_input_seal(key, 9, a, 64, false);
	sym_input_seal(key, 9, b, 64, false);
	assert_memory_not_equal(a + 64, b + 64, SYM_INPUT_TRAILER);
	assert_int_equal(sym_input_open(key, 9, a, 64, false), 0);
	assert_int_equal(sym_input_open(key, 9, b, 64, false), 0);
	uint8_t e[SYM_INPUT_TRAILER];
	sym_input_seal(key, 1, e, 0, true);
	assert_int_equal(sym_input_open(key, 1, e, 0, true), 0);
	e[0] ^= 1;
	assert_int_equal(sym_input_open(key, 1, e, 0, true), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(both_modes_open),
		cmocka_unit_test(every_change_refused),
		cmocka_unit_test(replay_refused),
		cmocka_unit_test(fresh_nonces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
