/* tests/unit/log_file.c — reports in files (CNAMUTEX_LOG_FILE) and while
 * the program runs (CNAMUTEX_REPORT_INTERVAL_S), seen by child processes
 * under the shim: a forking server with stderr closed leaves one file per
 * process, each with its own stats line; interval reports appear while the
 * program runs and add up to its acquisitions; every hostile pattern gets
 * one line on stderr and the report goes there.
 *
 *   unit-log-file                  runs the children below and checks
 *   unit-log-file forking DECOY    forks two workers that contend; with
 *                                  stderr closed, DECOY (opened first) is fd 2
 *   unit-log-file interval FILE    takes a mutex until FILE holds a report
 *   unit-log-file exec FILE        the same, then execs "child" (same pid)
 *   unit-log-file child            two threads on one mutex
 *   unit-log-file chdir            the same after chdir("/")
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "child.h"
#include "stats_line.h"

#define WORKERS 2
#define PARENT_LOCKS 100
#define INTERVAL_BATCH 100
#define INTERVAL_DEADLINE_MS 120000
#define FILE_MAX 65536

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

/* A pre-forking server: its pid and its workers' on stdout.  Workers end
 * with exit(), as servers' do, so each writes its exit report. */
static int forking_child(const char *decoy)
{
	check_running_under_shim();
	int fd = open(decoy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ(fd, STDERR_FILENO);
	for (int i = 0; i < PARENT_LOCKS; i++) {
		CHECK_EQ(pthread_mutex_lock(&mutex), 0);
		CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
	}
	printf("parent %ld\n", (long)getpid());
	pid_t pids[WORKERS];
	for (int w = 0; w < WORKERS; w++) {
		fflush(stdout);
		pids[w] = fork();
		CHECK(pids[w] >= 0);
		if (pids[w] == 0)
			exit(child_mutex_workout("log-file worker"));
		printf("worker %ld\n", (long)pids[w]);
	}
	for (int w = 0; w < WORKERS; w++) {
		int status;
		CHECK_EQ(waitpid(pids[w], &status, 0), pids[w]);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	return check_failures ? 1 : 0;
}

/* Up to size - 1 bytes of path, NUL-terminated; -1 if it cannot be read. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	ssize_t n;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* Uncontended locks until file has a stats line (an interval report), or
 * the deadline passes; then how many it took, on stdout, and with
 * then_exec this program again as "child", in the same process.  Not a
 * timing check: the deadline only keeps a broken shim from hanging. */
static int interval_child(const char *file, bool then_exec)
{
	check_running_under_shim();
	static char text[FILE_MAX];
	unsigned long locks = 0;
	bool reported = false;
	for (int ms = 0; ms < INTERVAL_DEADLINE_MS && !reported; ms++) {
		for (int i = 0; i < INTERVAL_BATCH; i++, locks++) {
			CHECK_EQ(pthread_mutex_lock(&mutex), 0);
			CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
		}
		reported = read_file(file, text, sizeof text) > 0 &&
			   child_lines_starting(text, STATS_LINE_PREFIX, NULL) > 0;
		struct timespec pause = { 0, 1000000 };
		nanosleep(&pause, NULL);
	}
	CHECK(reported);
	printf("pid %ld\nlocks %lu\n", (long)getpid(), locks);
	fflush(stdout);
	if (then_exec && !check_failures) {
		execl("/proc/self/exe", "/proc/self/exe", "child", (char *)NULL);
		CHECK(!"execl failed");
	}
	return check_failures ? 1 : 0;
}

static struct child_result result;
static char self[] = "/proc/self/exe";

static bool run(char *argv[], const char *const set[], enum child_streams streams)
{
	bool ran = child_run_streams(argv, set, streams, &result);
	CHECK(ran);
	CHECK_EQ(result.exit_code, 0);
	if (ran && result.exit_code != 0)
		fprintf(stderr, "child %s: exit %d, output:\n%s\n", argv[1], result.exit_code,
			result.err);
	return ran && result.exit_code == 0;
}

static bool run_workout(const char *mode, const char *const set[])
{
	char mode_arg[16];
	snprintf(mode_arg, sizeof mode_arg, "%s", mode);
	char *argv[] = { self, mode_arg, NULL };
	return run(argv, set, CHILD_CAPTURE_STDERR);
}

static void make_dir(char *path)
{
	strcpy(path, "/tmp/cnamutex-log-XXXXXX");
	CHECK(mkdtemp(path) != NULL);
}

/* Remove the flat directory dir and everything in it. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* Entries of dir; *only set to the name of the last one. */
static int count_entries(const char *dir, char only[NAME_MAX + 1])
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (only)
			snprintf(only, NAME_MAX + 1, "%s", e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* text holds exactly one stats line, of process pid (unless 0), with the
 * exit report's final=1 and acquisitions in all. */
static void check_exit_line(const char *what, const char *text, long pid, double acquisitions)
{
	struct stats_line s;
	bool found = stats_line_find(text, &s);
	CHECK(found);
	if (!found) {
		fprintf(stderr, "%s:\n%s\n", what, text);
		return;
	}
	if (pid != 0)
		CHECK_EQ(stats_get(&s, "pid"), pid);
	CHECK(stats_get(&s, "pid") > 0);
	CHECK_EQ(stats_get(&s, "final"), 1);
	CHECK(stats_get(&s, "time") > 0);
	CHECK(stats_get(&s, "interval_s") >= 0);
	CHECK_EQ(stats_acquisitions(&s), acquisitions);
}

static long pid_after(const char *text, const char *label)
{
	const char *line = NULL;
	if (child_lines_starting(text, label, &line) != 1)
		return -1;
	return strtol(line + strlen(label), NULL, 10);
}

/* The server: parent and two forked workers, stderr closed, a %p
 * pattern: three files, each with its process's one line, and nothing in
 * the file that took fd 2. */
static void per_process_files(void)
{
	char dir[64], decoy_dir[64], decoy[96], assignment[128];
	make_dir(dir);
	make_dir(decoy_dir);
	snprintf(decoy, sizeof decoy, "%s/decoy", decoy_dir);
	snprintf(assignment, sizeof assignment, "CNAMUTEX_LOG_FILE=%s/stats.%%p", dir);
	const char *set[] = { "CNAMUTEX_STATS=1", assignment, NULL };
	static char mode[] = "forking";
	char *argv[] = { self, mode, decoy, NULL };
	if (run(argv, set, CHILD_CAPTURE_STDOUT_CLOSED_STDERR)) {
		long parent = pid_after(result.err, "parent ");
		long workers[WORKERS];
		const char *line = result.err;
		CHECK_EQ(child_lines_starting(result.err, "worker ", NULL), WORKERS);
		for (int w = 0; w < WORKERS; w++) {
			line = strstr(line, "worker ");
			workers[w] = line ? strtol(line + 7, NULL, 10) : -1;
			line = line ? line + 1 : "";
		}
		CHECK_EQ(count_entries(dir, NULL), 1 + WORKERS);
		static char text[FILE_MAX];
		for (int p = 0; p <= WORKERS; p++) {
			long pid = p == 0 ? parent : workers[p - 1];
			char path[128];
			snprintf(path, sizeof path, "%s/stats.%ld", dir, pid);
			bool readable = pid > 0 && read_file(path, text, sizeof text) >= 0;
			CHECK(readable);
			if (!readable)
				continue;
			CHECK_EQ(child_line_count(text), 1);
			check_exit_line(path, text, pid,
					p == 0 ? PARENT_LOCKS
					       : CHILD_WORKOUT_THREADS * CHILD_WORKOUT_ROUNDS);
		}
		CHECK_EQ(read_file(decoy, text, sizeof text), 0);
	}
	remove_dir(dir);
	remove_dir(decoy_dir);
}

/* "unit-log-file MODE FILE" with statistics (and the profile, if asked),
 * reports every second to FILE in a new directory dir; true, with FILE's
 * text, if it ran and exited 0. */
static bool run_interval(const char *mode, bool with_profile, char dir[64], char *text,
			 size_t size)
{
	char file[96], assignment[128], mode_arg[16];
	make_dir(dir);
	snprintf(file, sizeof file, "%s/reports", dir);
	snprintf(assignment, sizeof assignment, "CNAMUTEX_LOG_FILE=%s", file);
	snprintf(mode_arg, sizeof mode_arg, "%s", mode);
	const char *set[] = { "CNAMUTEX_STATS=1", "CNAMUTEX_REPORT_INTERVAL_S=1", assignment,
			      with_profile ? "CNAMUTEX_PROFILE=1" : NULL, NULL };
	char *argv[] = { self, mode_arg, file, NULL };
	return run(argv, set, CHILD_CAPTURE_STDOUT_CLOSED_STDERR) &&
	       read_file(file, text, size) >= 0;
}

/* Interval reports with statistics and profile: at least one before the
 * program goes on, all of them in the one file, the exit report last,
 * and their fast acquisitions add up to the program's (each report has
 * the counts since the previous one). */
static void interval_reports(void)
{
	char dir[64];
	static char text[FILE_MAX];
	if (run_interval("interval", true, dir, text, sizeof text)) {
		long pid = pid_after(result.err, "pid ");
		long locks = pid_after(result.err, "locks ");
		int reports = child_lines_starting(text, STATS_LINE_PREFIX, NULL);
		CHECK(reports >= 2);
		/* each report: the stats line, the profile's stamp, its header */
		CHECK_EQ(child_lines_starting(text, "cnamutex: profile pid=", NULL), reports);
		CHECK_EQ(child_lines_starting(text, "cnamutex: profile: no contended mutexes", NULL),
			 reports);
		CHECK_EQ(child_line_count(text), 3 * reports);
		double fast = 0;
		int seen = 0;
		for (char *line = text; (line = strstr(line, STATS_LINE_PREFIX)); seen++) {
			char *nl = strchr(line, '\n');
			char saved = nl ? nl[1] : '\0';
			if (nl)
				nl[1] = '\0';
			struct stats_line s;
			bool parsed = stats_line_find(line, &s);
			CHECK(parsed);
			if (parsed) {
				fast += stats_get(&s, "acquisitions_fast");
				CHECK_EQ(stats_get(&s, "pid"), pid);
				CHECK_EQ(stats_get(&s, "final"), seen == reports - 1);
			}
			if (!nl)
				break;
			nl[1] = saved;
			line = nl + 1;
		}
		CHECK_EQ(seen, reports);
		CHECK_EQ(fast, locks);
	}
	remove_dir(dir);
}

/* A program exec'd in the same process appends to the file its former
 * image wrote an interval report to: both images' lines, one pid, the
 * exit report (the new image's) last. */
static void exec_appends(void)
{
	char dir[64];
	static char text[FILE_MAX];
	if (run_interval("exec", false, dir, text, sizeof text)) {
		long pid = pid_after(result.err, "pid ");
		int reports = child_lines_starting(text, STATS_LINE_PREFIX, NULL);
		CHECK(reports >= 2);
		CHECK_EQ(child_line_count(text), reports);
		const char *last = text;
		for (const char *p = text; (p = strstr(p, STATS_LINE_PREFIX)); p++)
			last = p;
		char pid_field[32];
		snprintf(pid_field, sizeof pid_field, " pid=%ld ", pid);
		const char *p = text;
		for (int i = 0; i < reports; i++, p = strchr(p, '\n') + 1) {
			const char *nl = strchr(p, '\n');
			const char *field = strstr(p, pid_field);
			CHECK(nl && field && field < nl);
			if (!nl)
				break;
		}
		check_exit_line("exec'd program's report", last, pid,
				CHILD_WORKOUT_THREADS * CHILD_WORKOUT_ROUNDS);
	}
	remove_dir(dir);
}

/* pattern refused, or its file not writable: exactly one line naming the
 * reason, then the report on stderr, complete; nothing else changes. */
static void check_refused(const char *pattern, const char *reason)
{
	char assignment[PATH_MAX * 2];
	snprintf(assignment, sizeof assignment, "CNAMUTEX_LOG_FILE=%s", pattern);
	const char *set[] = { "CNAMUTEX_STATS=1", assignment, NULL };
	if (!run_workout("child", set))
		return;
	const char *complaint = NULL;
	int complaints = child_lines_starting(result.err, "cnamutex: ignoring CNAMUTEX_LOG_FILE=",
					      &complaint);
	size_t line_len = complaint ? strcspn(complaint, "\n") : 0;
	const char *tail = "; using stderr";
	bool explained = complaint && strstr(complaint, reason) &&
			 strstr(complaint, reason) < complaint + line_len && line_len > strlen(tail) &&
			 !strncmp(complaint + line_len - strlen(tail), tail, strlen(tail));
	if (complaints != 1 || !explained || child_line_count(result.err) != 2)
		fprintf(stderr, "%.80s: want \"%s\", stderr:\n%.600s\n", pattern, reason, result.err);
	CHECK_EQ(complaints, 1);
	CHECK(explained);
	CHECK_EQ(child_line_count(result.err), 2);
	check_exit_line(pattern, result.err, 0, CHILD_WORKOUT_THREADS * CHILD_WORKOUT_ROUNDS);
}

static void hostile_patterns(void)
{
	char dir[64], path[PATH_MAX * 2], reason[PATH_MAX * 2 + 64];
	make_dir(dir);
	check_refused("", "empty value");
	snprintf(path, sizeof path, "%s/end%%", dir);
	check_refused(path, "'%' at the end");
	snprintf(path, sizeof path, "%s/x%%q.log", dir);
	check_refused(path, "unknown '%q'");

	/* Too long as given, and too long only once %e is expanded. */
	int n = snprintf(path, sizeof path, "%s/", dir);
	memset(path + n, 'a', PATH_MAX + 100);
	path[n + PATH_MAX + 100] = '\0';
	check_refused(path, "longer than PATH_MAX once expanded");
	n = snprintf(path, sizeof path, "%s/", dir);
	for (int i = 0; i < PATH_MAX / 8; i++)
		n += snprintf(path + n, sizeof path - (size_t)n, "%%e");
	check_refused(path, "longer than PATH_MAX once expanded");

	snprintf(reason, sizeof reason, "cannot open %s: %s", dir, strerror(EISDIR));
	check_refused(dir, reason);

	/* What fails for root too: a parent that is a regular file, a name
	 * procfs will not create, a FIFO nobody reads (which must not hang the
	 * program), and a /proc file root may open but nobody may write. */
	char plain[96];
	snprintf(plain, sizeof plain, "%s/plain", dir);
	int fd = open(plain, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	close(fd);
	snprintf(path, sizeof path, "%s/x", plain);
	snprintf(reason, sizeof reason, "cannot open %s: %s", path, strerror(ENOTDIR));
	check_refused(path, reason);
	check_refused("/proc/self/cnamutex.log", "cannot open /proc/self/cnamutex.log: ");
	snprintf(path, sizeof path, "%s/fifo", dir);
	CHECK_EQ(mkfifo(path, 0600), 0);
	snprintf(reason, sizeof reason, "cannot open %s: %s", path, strerror(ENXIO));
	check_refused(path, reason);
	check_refused("/proc/version", " /proc/version: ");

	/* Nothing was created but what the test made. */
	CHECK_EQ(count_entries(dir, NULL), 2);
	remove_dir(dir);
}

/* %e, %% and %p expand; nothing on stderr, the other tunables' complaints
 * included; a second run appends. */
static void expansion_and_append(void)
{
	char dir[64], assignment[PATH_MAX + 32], name[NAME_MAX + 1], path[PATH_MAX];
	static char text[FILE_MAX];
	make_dir(dir);
	snprintf(assignment, sizeof assignment, "CNAMUTEX_LOG_FILE=%s/%%e.%%%%.%%p", dir);
	const char *set[] = { "CNAMUTEX_STATS=1", "CNAMUTEX_SPIN=x", assignment, NULL };
	if (run_workout("child", set)) {
		CHECK_EQ(result.err[0], '\0');
		CHECK_EQ(count_entries(dir, name), 1);
		const char *prefix = "unit-log-file.%.";
		bool named = !strncmp(name, prefix, strlen(prefix));
		if (!named)
			fprintf(stderr, "log file named %s\n", name);
		CHECK(named);
		snprintf(path, sizeof path, "%s/%s", dir, name);
		if (named && read_file(path, text, sizeof text) >= 0) {
			CHECK_EQ(child_line_count(text), 2);
			CHECK_EQ(child_lines_starting(text, "cnamutex: ignoring CNAMUTEX_SPIN=x: ", NULL),
				 1);
			check_exit_line(path, text, strtol(name + strlen(prefix), NULL, 10),
					CHILD_WORKOUT_THREADS * CHILD_WORKOUT_ROUNDS);
		}
		unlink(path);
	}

	snprintf(path, sizeof path, "%s/shared", dir);
	snprintf(assignment, sizeof assignment, "CNAMUTEX_LOG_FILE=%s", path);
	const char *shared[] = { "CNAMUTEX_STATS=1", assignment, NULL };
	for (int i = 0; i < 2; i++)
		if (run_workout("child", shared))
			CHECK_EQ(result.err[0], '\0');
	if (read_file(path, text, sizeof text) >= 0)
		CHECK_EQ(child_lines_starting(text, STATS_LINE_PREFIX, NULL), 2);
	remove_dir(dir);
}

/* A relative pattern is the directory at load's, though the program
 * chdirs (as daemons do) before its report. */
static void relative_pattern(void)
{
	char dir[64], cwd[PATH_MAX], name[NAME_MAX + 1], path[PATH_MAX];
	static char text[FILE_MAX];
	make_dir(dir);
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK_EQ(chdir(dir), 0);
	const char *set[] = { "CNAMUTEX_STATS=1", "CNAMUTEX_LOG_FILE=relative.%p", NULL };
	bool ran = run_workout("chdir", set);
	CHECK_EQ(chdir(cwd), 0);
	if (ran) {
		CHECK_EQ(result.err[0], '\0');
		CHECK_EQ(count_entries(dir, name), 1);
		snprintf(path, sizeof path, "%s/%s", dir, name);
		CHECK(!strncmp(name, "relative.", 9));
		if (read_file(path, text, sizeof text) >= 0)
			check_exit_line(path, text, strtol(name + 9, NULL, 10),
					CHILD_WORKOUT_THREADS * CHILD_WORKOUT_ROUNDS);
	}
	remove_dir(dir);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "forking"))
		return forking_child(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "interval"))
		return interval_child(argv[2], false);
	if (argc == 3 && !strcmp(argv[1], "exec"))
		return interval_child(argv[2], true);
	if (argc == 2 && !strcmp(argv[1], "child"))
		return child_mutex_workout("log-file child");
	if (argc == 2 && !strcmp(argv[1], "chdir")) {
		CHECK_EQ(chdir("/"), 0);
		return child_mutex_workout("log-file chdir child");
	}
	check_running_under_shim();
	per_process_files();
	interval_reports();
	exec_appends();
	hostile_patterns();
	expansion_and_append();
	relative_pattern();
	return check_report("log-file");
}
