#include "experiment/interrupt.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

enum { FREE, BUSY, TEMP, KEPT }; /* a slot's state; BUSY: being written, the handler skips it */

#define SLOT_PATH 1200

static struct {
	atomic_int state;
	char path[SLOT_PATH];
} slots[SYM_INTERRUPT_SLOTS];

static const char *cmd_name = "symphony";
static atomic_bool installed; /* kept files are named only when a handler can report them */
static atomic_flag handling = ATOMIC_FLAG_INIT;
static atomic_bool progress_on;
static const char *progress_path;
static size_t progress_total;
static atomic_size_t progress_done;

/* ---- the handler: unlink(2), write(2), _exit(2) only ---- */

struct msg {
	char buf[4096];
	size_t n;
};

static void put(struct msg *m, const char *s)
{
	while (*s && m->n < sizeof(m->buf) - 1)
		m->buf[m->n++] = *s++;
}

static void put_size(struct msg *m, size_t v)
{
	char d[24];
	int i = 0;
	do
		d[i++] = (char)('0' + v % 10);
	while ((v /= 10) && i < (int)sizeof(d));
	while (i > 0 && m->n < sizeof(m->buf) - 1)
		m->buf[m->n++] = d[--i];
}

static void on_signal(int sig)
{
	if (atomic_flag_test_and_set(&handling))
		for (;;) /* another thread is already ending the process */
			pause();
	size_t kept = 0;
	for (int i = 0; i < SYM_INTERRUPT_SLOTS; i++) {
		int s = atomic_load(&slots[i].state);
		if (s == TEMP)
			unlink(slots[i].path);
		kept += s == KEPT;
	}
	struct msg m = { .n = 0 };
	put(&m, "symphony ");
	put(&m, cmd_name);
	put(&m, ": interrupted by ");
	put(&m, sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal");
	if (atomic_load(&progress_on)) {
		put(&m, " after ");
		put_size(&m, atomic_load(&progress_done));
		put(&m, " of ");
		put_size(&m, progress_total);
		put(&m, " points; ");
		put(&m, progress_path);
		put(&m, " holds them: resume with --resume");
	} else if (!kept) {
		put(&m, "; no result written");
	} else {
		put(&m, "; written before it: ");
		size_t k = 0;
		for (int i = 0; i < SYM_INTERRUPT_SLOTS; i++) {
			if (atomic_load(&slots[i].state) != KEPT)
				continue;
			put(&m, k++ ? ", " : "");
			put(&m, slots[i].path);
		}
		put(&m, "; the other outputs were not written");
	}
	put(&m, "\n");
	for (size_t off = 0; off < m.n;) {
		ssize_t w = write(2, m.buf + off, m.n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	_exit(128 + sig);
}

void sym_interrupt_install(const char *cmd)
{
	cmd_name = cmd;
	atomic_store(&installed, true);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* a signal ignored from the start stays ignored (nohup, a background job of a script) */
		struct sigaction old;
		if (!sigaction(sigs[i], NULL, &old) && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

/* ---- the table, written outside the handler ---- */

static int claim(const char *path)
{
	if (strlen(path) >= SLOT_PATH)
		return -ENAMETOOLONG;
	for (int i = 0; i < SYM_INTERRUPT_SLOTS; i++) {
		int want = FREE;
		if (atomic_compare_exchange_strong(&slots[i].state, &want, BUSY)) {
			memcpy(slots[i].path, path, strlen(path) + 1);
			return i;
		}
	}
	return -EMFILE;
}

int sym_interrupt_add_temp(const char *tmp)
{
	int i = claim(tmp);
	if (i >= 0)
		atomic_store(&slots[i].state, TEMP);
	return i;
}

void sym_interrupt_kept(int slot, const char *path)
{
	if (slot < 0 || slot >= SYM_INTERRUPT_SLOTS)
		return;
	atomic_store(&slots[slot].state, BUSY);
	if (!atomic_load(&installed) || strlen(path) >= SLOT_PATH) { /* not reported */
		atomic_store(&slots[slot].state, FREE);
		return;
	}
	memcpy(slots[slot].path, path, strlen(path) + 1);
	atomic_store(&slots[slot].state, KEPT);
}

void sym_interrupt_forget(int slot)
{
	if (slot >= 0 && slot < SYM_INTERRUPT_SLOTS)
		atomic_store(&slots[slot].state, FREE);
}

void sym_interrupt_progress(const char *path, size_t total, size_t done)
{
	progress_path = path;
	progress_total = total;
	atomic_store(&progress_done, done);
	atomic_store(&progress_on, true);
}

void sym_interrupt_progress_step(void)
{
	atomic_fetch_add(&progress_done, 1);
}

void sym_interrupt_progress_end(void)
{
	atomic_store(&progress_on, false);
}
