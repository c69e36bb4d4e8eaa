// SPDX-License-Identifier: GPL-2.0-only
/*
 * Enough telnet (RFC 854, RFC 855 option negotiation) for a console server
 * in telnet mode: ser2net's "accepter: telnet,tcp,...", conmux's and most
 * terminal servers' ports. The driver is tcp.c's with these two filters.
 *
 * In: IAC IAC is a 255 data byte; IAC WILL/WONT/DO/DONT x is answered
 * (BINARY and SUPPRESS-GO-AHEAD both ways and the far end's ECHO are
 * accepted, everything else refused: RFC 2217's COM-PORT-OPTION too, so
 * the console server keeps its own line settings); IAC SB ... IAC SE is
 * skipped whole; any other command (NOP, GA, AYT, ...) is dropped; CR NUL
 * is CR unless the far end sends binary. Answers go only on a change of
 * state, so two sides that disagree cannot loop (RFC 854's rule). No IAC
 * byte ever reaches a line.
 *
 * Out: 255 is doubled; nothing else changes (ser2net takes binary).
 */
#include <string.h>

#include "console/console_int.h"

#define IAC	255
#define DONT	254
#define DO	253
#define WONT	252
#define WILL	251
#define SB	250
#define SE	240

#define OPT_BINARY	0
#define OPT_ECHO	1
#define OPT_SGA		3

enum { TN_DATA, TN_IAC, TN_OPT, TN_SB, TN_SB_IAC, TN_CR };

void kcon_telnet_reset(struct kcon_telnet *t)
{
	memset(t, 0, sizeof(*t));
}

static bool has(const unsigned char *set, unsigned char opt)
{
	return set[opt / 8] & (1u << (opt % 8));
}

static void put_opt(unsigned char *set, unsigned char opt, bool on)
{
	if (on)
		set[opt / 8] |= (unsigned char)(1u << (opt % 8));
	else
		set[opt / 8] &= (unsigned char)~(1u << (opt % 8));
}

static void answer(struct sbuf *reply, unsigned char verb, unsigned char opt)
{
	char b[3] = { (char)IAC, (char)verb, (char)opt };

	sbuf_addn(reply, b, 3);
}

/* WILL/WONT: the far end's side of opt; DO/DONT: ours. */
static void negotiate(struct kcon_telnet *t, unsigned char verb,
		      unsigned char opt, struct sbuf *reply)
{
	bool his = verb == WILL || verb == WONT;
	bool on = verb == WILL || verb == DO;
	unsigned char *set = his ? t->him : t->us;
	bool ok = opt == OPT_BINARY || opt == OPT_SGA ||
		  (his && opt == OPT_ECHO);

	if (on && !ok) {
		answer(reply, his ? DONT : WONT, opt);
		return;
	}
	if (has(set, opt) == on)
		return;		/* no change: no answer (no loops) */
	put_opt(set, opt, on);
	answer(reply, his ? (on ? DO : DONT) : (on ? WILL : WONT), opt);
}

/* One byte after IAC: a data 255, a verb to read on, or a command. */
static int after_iac(struct kcon_telnet *t, unsigned char b, char *out,
		     size_t *k)
{
	switch (b) {
	case IAC:
		out[(*k)++] = (char)IAC;
		return TN_DATA;
	case WILL: case WONT: case DO: case DONT:
		t->verb = b;
		return TN_OPT;
	case SB:
		return TN_SB;
	default:
		return TN_DATA;	/* NOP, GA, AYT, DM, ...: not console text */
	}
}

size_t kcon_telnet_filter(struct kcon_telnet *t, char *buf, size_t n,
			  struct sbuf *reply)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		unsigned char b = (unsigned char)buf[i];

		switch (t->state) {
		case TN_CR:
			t->state = TN_DATA;
			if (b == 0 && !has(t->him, OPT_BINARY))
				break;	/* CR NUL is a bare CR */
			/* fall through */
		case TN_DATA:
			if (b == IAC) {
				t->state = TN_IAC;
			} else {
				buf[k++] = (char)b;
				if (b == '\r')
					t->state = TN_CR;
			}
			break;
		case TN_IAC:
			t->state = after_iac(t, b, buf, &k);
			break;
		case TN_OPT:
			negotiate(t, t->verb, b, reply);
			t->state = TN_DATA;
			break;
		case TN_SB:
			if (b == IAC)
				t->state = TN_SB_IAC;
			break;
		case TN_SB_IAC:
			/* IAC SE ends it; IAC IAC is the sub-option's 255 */
			t->state = b == SE ? TN_DATA : TN_SB;
			break;
		}
	}
	return k;
}
