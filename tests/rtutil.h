/* tests/rtutil.h - the process helpers of the tests that start the runtime's
 * processes (test_runtime, test_flood): time, spawning `symphony ARGS...`
 * with its output into a log file, waiting with a deadline, reading a log.
 *
 * The including file defines, before including this:
 *   static const char *bin;  the symphony binary
 *   static char dir[N];      the test's directory, where the logs go
 */
#ifndef SYM_RTUTIL_H
#define SYM_RTUTIL_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Starts `symphony ARGS...` with stderr (and stdout) into dir/log. */
static pid_t spawn(const char *log, const char *const *args)
{
	pid_t pid = fork();
	if (pid == 0) {
		char path[640];
		snprintf(path, sizeof(path), "%s/%s", dir, log);
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		const char *argv[32];
		int n = 0;
		argv[n++] = bin;
		for (int i = 0; args[i] && n < 31; i++)
			argv[n++] = args[i];
		argv[n] = NULL;
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* Waits for a process with a deadline; kills it past the deadline. Returns its exit status or -1. */
static int wait_for(pid_t pid, double timeout_s)
{
	double end = now_s() + timeout_s;
	int st;
	while (now_s() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		sleep_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* dir/name's text (at most 1 MiB; the caller frees it), or NULL. */
static char *slurp(const char *name)
{
	char path[640];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strdup(buf);
}

/* How many times pat occurs in dir/name. */
static int count_in(const char *name, const char *pat)
{
	char *s = slurp(name);
	int n = 0;
	for (char *p = s; p && (p = strstr(p, pat)); p += strlen(pat))
		n++;
	free(s);
	return n;
}

#endif
