/* runtime/inputseal.h - a request's input as a backend reads it: sealed by
 * its frontend, checked by the backend.
 *
 * Fabric messages are sealed on their connection (runtime/fabric.h), but a
 * backend fetches inputs with one-sided RMA reads of the frontend's pool,
 * which no message seals. So the frontend seals each input where it lies, in
 * its pool slot, with XChaCha20-Poly1305 (libsodium's
 * crypto_aead_xchacha20poly1305_ietf, detached) under a key of its own that
 * it tells each backend in the sealed GRANT:
 *
 *   - encrypted (the default): the input is encrypted in place;
 *   - authenticated only (`input_encryption: false`, for speed): the input
 *     stays clear and is the AEAD's associated data, so only its tag is
 *     computed (Poly1305 alone).
 *
 * The slot's trailer, right after the input, holds the 16-byte tag and the
 * 24-byte nonce: 16 random bytes, then the request's id (little-endian), so
 * the backend, which knows the id from its sealed PLAN, refuses an input that
 * was sealed for another request (an older one of the same slot, replayed
 * by whoever sits on the path) as well as a changed byte. The random part
 * keeps nonces apart when a slot's ids come round again.
 *
 * Pure functions; the buffers and key belong to the caller.
 */
#ifndef SYM_INPUTSEAL_H
#define SYM_INPUTSEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYM_INPUT_KEY 32     /* crypto_aead_xchacha20poly1305_ietf_KEYBYTES */
#define SYM_INPUT_TRAILER 40 /* after the input: tag (16), nonce (24) */

/* A fresh random key. */
void sym_input_keygen(uint8_t key[SYM_INPUT_KEY]);

/* Seals the len bytes at data (followed by SYM_INPUT_TRAILER bytes of room)
 * for request id: encrypts them in place when `encrypt`, and writes the
 * trailer. */
void sym_input_seal(const uint8_t key[SYM_INPUT_KEY], uint64_t id, uint8_t *data, size_t len, bool encrypt);

/* Checks what sym_input_seal made of request id's len bytes at data (and
 * their trailer after them), decrypting them in place when `encrypted`.
 * Returns 0, or -EBADMSG (a changed byte, another key, another request's
 * input, or another length) and then leaves data undefined. */
int sym_input_open(const uint8_t key[SYM_INPUT_KEY], uint64_t id, uint8_t *data, size_t len, bool encrypted);

#endif
