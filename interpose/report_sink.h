/* interpose/report_sink.h — where reports go: the file CNAMUTEX_LOG_FILE
 * names for this process, or stderr.
 *
 * A report is written between report_sink_begin() and report_sink_end(),
 * by one thread at a time (the report guard, see report.h).
 */
#ifndef INTERPOSE_REPORT_SINK_H
#define INTERPOSE_REPORT_SINK_H

#include <stddef.h>

/*
 * At load: read CNAMUTEX_LOG_FILE, check the pattern and open (creating)
 * this process's file, so that a bad one is reported at start.  Returns
 * the open descriptor, for the caller to close once the load-time
 * complaints are written to it, or -1 (unset, or refused with one line on
 * stderr: reports go to stderr).
 */
int report_sink_load(void);

/* Open the calling process's file for one report (expanded with its own
 * pid, so a forked child writes its own file); stderr if there is none or
 * it cannot be opened (said once, on stderr). */
void report_sink_begin(void);
/* All of buf, to the report's file; on a write error, one line on stderr
 * and the rest of the reports go to stderr. */
void report_sink_write(const char *buf, size_t len);
void report_sink_end(void);

#endif
