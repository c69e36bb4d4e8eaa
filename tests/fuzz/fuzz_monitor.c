// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the console monitor, fed any bytes as console output
 * line by line, as the boot step and "ktest monitor" feed it: lines split at
 * '\n' (NUL bytes and invalid UTF-8 are only bytes), the clock moving on
 * between lines, ticks when the monitor asks for one, EOF at the end.
 *
 * The first byte (also fed as console output) picks the options, so the
 * seeds are console logs as they came off the line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "console/monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const success_lines[] = {
	"login:", "Please press Enter to activate this console",
	"^ktest-lab: (booted|ready)$", NULL,
};

static void check(const struct kmonitor *m)
{
	const struct kmon_crash *c;
	size_t n = kmonitor_crashes(m, &c);

	if (!kmonitor_reason(m))
		abort();
	for (size_t i = 0; i < n; i++) {
		/* one class bit, a title and the report's text */
		if (!c[i].cls || (c[i].cls & (c[i].cls - 1)) ||
		    (c[i].cls & ~(unsigned int)KMON_ALL))
			abort();
		if (!c[i].title || !c[i].report)
			abort();
		(void)strlen(c[i].title);
		(void)strlen(c[i].report);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t k = size ? data[0] : 0;
	struct kmon_config c = {
		.success_line = success_lines[k & 3],
		.expected_version = k & 4 ? "6.1.0-ktest" : NULL,
		.detect_triple_fault = k & 8,
		.ignore_errors = k & 16,
		.fail_classes = k & 32 ? KMON_ALL : KMON_DEFAULT_FAIL,
		.timeout_ms = k & 64 ? 50 : 120000,
		.booted_timeout_ms = 1000,
		.stop_after_success_ms = k & 128 ? 5 : 10000,
		.stop_after_failure_ms = k & 128 ? 5 : 60000,
		.stop_test_after_ms = k & 64 ? 200 : 600000,
	};
	const char *p = (const char *)data, *end = p + size;
	struct kmonitor *m;
	int64_t now = 0;
	char why[256];

	m = kmonitor_new(&c, 0, why, sizeof(why));
	if (!m)
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		/* a line every ms, a pause after every 64th */
		now += n % 64 ? 1 : 40;
		if (kmonitor_deadline(m) <= now)
			kmonitor_tick(m, now);
		kmonitor_line(m, p, n, now);
		p += n + (nl != NULL);
	}
	kmonitor_eof(m, now + 1);
	if (kmonitor_verdict(m) == KMON_RUNNING)
		abort();
	check(m);
	kmonitor_free(m);
	return 0;
}
