/* interpose/report_sink.c — CNAMUTEX_LOG_FILE: each process's reports in a
 * file of its own.
 *
 * The pattern is checked, and the file created, at load; the descriptor is
 * then closed.  Each report opens the file again, expanded with the pid of
 * the process writing it, and closes it after: a forked child writes its
 * own file, and the library never holds a descriptor that the program may
 * close, dup2 over, or find where it expects a file of its own (with
 * stderr closed, fd 2 is whatever the program opened next).  Writes are
 * write(2) with O_APPEND, never stdio, so processes sharing a file append
 * whole lines.  A relative pattern is made absolute at load, since the
 * program may chdir.
 */
#include "report_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tunables.h"

#define LOG_FILE_VAR "CNAMUTEX_LOG_FILE"
#define FALLBACK "stderr"

/* Each expansion is at least half as long as its sequence, so a pattern
 * that fits twice PATH_MAX covers every one whose expansion fits PATH_MAX. */
static char pattern[2 * PATH_MAX];
static const char *pattern_as_given; /* the environment's, for messages */
static char program_name[NAME_MAX + 1];
static bool to_file;                 /* false once refused or failed */

/* The report being written (one at a time): its descriptor and path. */
static int sink_fd = STDERR_FILENO;
static bool sink_is_file;
static char sink_path[PATH_MAX];

static void refuse(const char *reason)
{
	to_file = false;
	tunable_complain(LOG_FILE_VAR, pattern_as_given, reason, FALLBACK);
}

/* "what PATH: error", the path cut short so the line stays readable. */
static void refuse_errno(const char *what, const char *path, int err)
{
	char reason[640];
	snprintf(reason, sizeof reason, "%s %.512s: %s", what, path, strerror(err));
	refuse(reason);
}

/* Expand pat for process pid into out[PATH_MAX]; false with *reason if
 * the pattern is malformed or the result too long. */
static bool expand(const char *pat, pid_t pid, char *out, const char **reason)
{
	static char why[96];
	size_t n = 0;
	for (const char *p = pat; *p; p++) {
		char buf[24];
		const char *piece = buf;
		if (*p != '%') {
			buf[0] = *p;
			buf[1] = '\0';
		} else {
			switch (*++p) {
			case 'p':
				snprintf(buf, sizeof buf, "%ld", (long)pid);
				break;
			case 'e':
				piece = program_name;
				break;
			case '%':
				piece = "%";
				break;
			case '\0':
				*reason = "'%' at the end (expected %p, %e or %%)";
				return false;
			default:
				snprintf(why, sizeof why, "unknown '%%%c' (expected %%p, %%e or %%%%)",
					 *p >= 0x20 && *p < 0x7f ? *p : '?');
				*reason = why;
				return false;
			}
		}
		size_t len = strlen(piece);
		if (n + len >= PATH_MAX) {
			*reason = "longer than PATH_MAX once expanded";
			return false;
		}
		memcpy(out + n, piece, len);
		n += len;
	}
	out[n] = '\0';
	return true;
}

/* The executable's file name (%e), from /proc/self/exe, else argv[0]. */
static void load_program_name(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	const char *name = program_invocation_short_name;
	if (n > 0) {
		exe[n] = '\0';
		const char *slash = strrchr(exe, '/');
		name = slash ? slash + 1 : exe;
	}
	if (!name || !*name)
		name = "unknown";
	size_t len = strnlen(name, sizeof program_name - 1);
	memcpy(program_name, name, len);
	program_name[len] = '\0';
}

/* pattern = the working directory (its '%' doubled), '/', text. */
static bool make_absolute(const char *text)
{
	char cwd[PATH_MAX];
	size_t n = 0;
	if (text[0] != '/' && getcwd(cwd, sizeof cwd)) {
		for (const char *c = cwd; *c && n + 2 < sizeof pattern; c++) {
			if (*c == '%')
				pattern[n++] = '%';
			pattern[n++] = *c;
		}
		if (n + 1 < sizeof pattern && (n == 0 || pattern[n - 1] != '/'))
			pattern[n++] = '/';
	}
	size_t len = strlen(text);
	if (n + len >= sizeof pattern)
		return false;
	memcpy(pattern + n, text, len + 1);
	return true;
}

/* Append-only, created 0644 (less the umask).  O_NONBLOCK only for the
 * open, so a FIFO nobody reads is an error, not a hang. */
static int open_log(const char *path)
{
	int fd;
	do
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
			  0644);
	while (fd < 0 && errno == EINTR);
	if (fd >= 0)
		fcntl(fd, F_SETFL, O_APPEND);
	return fd;
}

int report_sink_load(void)
{
	pattern_as_given = getenv(LOG_FILE_VAR);
	if (!pattern_as_given)
		return -1;
	to_file = true;
	if (!*pattern_as_given) {
		refuse("empty value");
		return -1;
	}
	load_program_name();
	const char *reason = "longer than PATH_MAX once expanded";
	if (!make_absolute(pattern_as_given) ||
	    !expand(pattern, getpid(), sink_path, &reason)) {
		refuse(reason);
		return -1;
	}
	int fd = open_log(sink_path);
	if (fd < 0)
		refuse_errno("cannot open", sink_path, errno);
	return fd;
}

void report_sink_begin(void)
{
	sink_fd = STDERR_FILENO;
	sink_is_file = false;
	if (!to_file)
		return;
	const char *reason;
	if (!expand(pattern, getpid(), sink_path, &reason)) {
		refuse(reason);
		return;
	}
	int fd = open_log(sink_path);
	if (fd < 0) {
		refuse_errno("cannot open", sink_path, errno);
		return;
	}
	sink_fd = fd;
	sink_is_file = true;
}

void report_sink_write(const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(sink_fd, buf, len);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (!sink_is_file)
			return; /* stderr fails too: nowhere else to say it */
		refuse_errno("cannot write", sink_path, n < 0 ? errno : EIO);
		close(sink_fd);
		sink_fd = STDERR_FILENO;
		sink_is_file = false;
	}
}

void report_sink_end(void)
{
	if (sink_is_file)
		close(sink_fd);
	sink_fd = STDERR_FILENO;
	sink_is_file = false;
}
