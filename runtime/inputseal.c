#include "runtime/inputseal.h"

#include <errno.h>
#include <sodium.h>

_Static_assert(SYM_INPUT_KEY == crypto_aead_xchacha20poly1305_ietf_KEYBYTES, "input key size");
_Static_assert(SYM_INPUT_TRAILER ==
		       crypto_aead_xchacha20poly1305_ietf_ABYTES + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
	       "input trailer size");

#define TAG crypto_aead_xchacha20poly1305_ietf_ABYTES
#define NONCE crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define RANDOM (NONCE - 8)

void sym_input_keygen(uint8_t key[SYM_INPUT_KEY])
{
	crypto_aead_xchacha20poly1305_ietf_keygen(key);
}

static void put_id(uint8_t *p, uint64_t id)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(id >> (8 * i));
}

void sym_input_seal(const uint8_t key[SYM_INPUT_KEY], uint64_t id, uint8_t *data, size_t len, bool encrypt)
{
	uint8_t *tag = data + len, *nonce = tag + TAG;
	randombytes_buf(nonce, RANDOM);
	put_id(nonce + RANDOM, id);
	if (encrypt)
		crypto_aead_xchacha20poly1305_ietf_encrypt_detached(data, tag, NULL, data, len, NULL, 0, NULL, nonce,
								    key);
	else {
		uint8_t none = 0; /* the empty message (the API wants a pointer) */
		crypto_aead_xchacha20poly1305_ietf_encrypt_detached(&none, tag, NULL, &none, 0, data, len, NULL, nonce,
								    key);
	}
}

int sym_input_open(const uint8_t key[SYM_INPUT_KEY], uint64_t id, uint8_t *data, size_t len, bool encrypted)
{
	const uint8_t *tag = data + len, *nonce = tag + TAG;
	uint8_t want[8];
	put_id(want, id);
	if (sodium_memcmp(nonce + RANDOM, want, 8)) /* sealed for another request */
		return -EBADMSG;
	uint8_t none = 0; /* the empty message (the API wants a pointer) */
	int rc = encrypted ? crypto_aead_xchacha20poly1305_ietf_decrypt_detached(data, NULL, data, len, tag, NULL, 0,
										 nonce, key)
			   : crypto_aead_xchacha20poly1305_ietf_decrypt_detached(&none, NULL, &none, 0, tag, data, len,
										 nonce, key);
	return rc ? -EBADMSG : 0;
}
