// SPDX-License-Identifier: GPL-2.0
/*
 * test_harden.c - inputs a hostile or unlucky user produces: a file without
 * totals, clocks at the ends of the 64-bit range in the join's alignment, a
 * full disk under the .ntp writer, outputs that would replace an input, a
 * symbolic link or a failing device, and control bytes in names.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/render/esc.h"
#include "core/model/join.h"
#include "core/model/model.h"
#include "core/store/ntpfile.h"
#include "core/render/out.h"
#include "core/render/report.h"
#include "core/pump/pump.h"
#include "core/pump/pump_files.h"
#include "ui/screen.h"

static char dir[] = "/tmp/test_harden.XXXXXX";

static void at(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static struct ntp_record rec(uint8_t side, uint16_t cid, uint64_t slba, uint64_t t)
{
	struct ntp_record r;

	memset(&r, 0, sizeof(r));
	r.side = side;
	r.transport = NTP_TRANSPORT_TCP;
	r.opcode = 2;
	r.nsid = 1;
	r.len = 4096;
	r.nlb = 7;
	r.slba = slba;
	r.cntlid = 1;
	r.qid = 1;
	r.cid = cid;
	snprintf(r.dev, sizeof(r.dev), "nvme1n1");
	for (int k = 0; k < NTP_TS_COUNT; k++)
		r.ts[k] = t + (uint64_t)k * 1000;
	r.ts_valid = (1u << NTP_TS_COUNT) - 1;
	return r;
}

static struct ntp_file_info finfo(uint8_t role, uint64_t mono, uint64_t real)
{
	struct ntp_file_info i;

	memset(&i, 0, sizeof(i));
	i.role = role;
	i.transport = NTP_TRANSPORT_TCP;
	i.sampling = 1;
	i.start_mono_ns = mono;
	i.start_real_ns = real;
	snprintf(i.hostname, sizeof(i.hostname), role == NTP_ROLE_TARGET ? "t" : "h");
	return i;
}

/* A file with records and no totals block (ntprof record killed before its
 * first flush, `head -c` of a recording): the model takes "no totals". */
static void test_model_no_totals(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 0);
	ntp_model_set_totals(m, NULL, 0, 1000);	/* UBSan: memcpy(dst, NULL, 0) before */
	ntp_model_close_interval(m, 1000000, s);
	assert_int_equal(s->n_groups, 0);
	ntp_model_free(m);
	free(s);
}

/* Times at the ends of the 64-bit range in both records of a command (a
 * hostile file whose CRCs hold): components, stages and their sums wrap
 * (UBSan in stage.c and the model's sums before), nothing aborts. */
static void test_model_extreme_times(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_BOTH, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	const uint64_t v[4] = { 0, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX };

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 0);
	for (int i = 0; i < 64; i++) {
		struct ntp_record h = rec(NTP_SIDE_HOST, (uint16_t)i, 8u * (unsigned)i, 0);
		struct ntp_record t = rec(NTP_SIDE_TARGET, (uint16_t)i, 8u * (unsigned)i, 0);

		for (int k = 0; k < NTP_TS_COUNT; k++) {
			h.ts[k] = v[(k + i) % 4];
			t.ts[k] = v[(k * 3 + i) % 4];
		}
		if (i % 2)
			h.len = t.len = 131072;	/* writes with R2T on some */
		h.opcode = t.opcode = (uint8_t)(i % 3 ? 2 : 1);
		ntp_model_ingest(m, &t);
		ntp_model_ingest(m, &h);
	}
	ntp_model_close_interval(m, UINT64_MAX, s);
	assert_true(s->n_groups >= 1);
	ntp_model_free(m);
	free(s);
}

static void write_recs(const char *path, const struct ntp_file_info *fi, const struct ntp_record *r, size_t n)
{
	char err[256];
	struct ntp_writer *w = ntp_writer_open(path, fi, err, sizeof(err));

	assert_non_null(w);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ntp_writer_add(w, &r[i]), 0);
	assert_int_equal(ntp_writer_close(w, fi->start_mono_ns + 1000), 0);
}

/* Wall clocks at opposite ends of the 64-bit range: the alignment's
 * "mapped time" and the host-minus-target differences overflowed int64
 * (UBSan at join_align.c) before; now they wrap, and the offset found is
 * the wrapped difference. */
static void test_align_extreme_clocks(void **state)
{
	enum { N = 64 };
	struct ntp_record h[N], t[N];
	char hp[300], tp[300], err[256];
	/* host: records near 2^63 on the mapped clock; target: far below 0 */
	struct ntp_file_info hi = finfo(NTP_ROLE_HOST, 1000, INT64_MAX - 10);
	struct ntp_file_info ti = finfo(NTP_ROLE_TARGET, (uint64_t)1 << 62, 0);
	struct ntp_join_input in[2];
	struct ntp_model_config cfg;
	int64_t adj[2] = { 7, 7 };

	(void)state;
	for (int i = 0; i < N; i++) {
		h[i] = rec(NTP_SIDE_HOST, (uint16_t)i, 8u * (unsigned)i, 1000 + 100000ull * (unsigned)i);
		t[i] = rec(NTP_SIDE_TARGET, (uint16_t)i, 8u * (unsigned)i, ((uint64_t)1 << 62) + 100000ull * (unsigned)i);
	}
	at(hp, sizeof(hp), "h.ntp");
	at(tp, sizeof(tp), "t.ntp");
	write_recs(hp, &hi, h, N);
	write_recs(tp, &ti, t, N);
	in[0] = (struct ntp_join_input){ hp, &hi };
	in[1] = (struct ntp_join_input){ tp, &ti };
	assert_int_equal(ntp_join_check(in, 2, &cfg, err, sizeof(err)), 0);
	ntp_join_align(in, 2, 0, adj);
	assert_int_equal(adj[0], 0);
	/* host mapped - target mapped for one command, computed mod 2^64 */
	{
		uint64_t hm = h[0].ts[NTP_TS_H_CMD_SENT] + (hi.start_real_ns - hi.start_mono_ns);
		uint64_t tm = t[0].ts[NTP_TS_T_CMD_ARRIVE] + (ti.start_real_ns - ti.start_mono_ns);

		assert_int_equal(adj[1], (int64_t)(hm - tm));
	}
	unlink(hp);
	unlink(tp);
}

/* A disk that fills up mid-block (RLIMIT_FSIZE stands in for ENOSPC: the
 * same partial write, then EFBIG): the writer keeps every whole block that
 * fits, in smaller blocks, and counts the rest lost. Before, the 4096
 * records of the cut block were all lost and the file had none. */
static void test_writer_full_disk(void **state)
{
	const size_t n = NTP_BLOCK_RECORDS;
	const rlim_t limit = NTP_HEADER_LEN + 1000 * sizeof(struct ntp_record) + 100;
	struct ntp_file_info fi = finfo(NTP_ROLE_HOST, 1000, 1000);
	struct rlimit old, lim;
	struct ntp_writer *w;
	struct ntp_reader *r;
	struct ntp_record x;
	char path[300], err[256];
	uint64_t got = 0;
	int ret = 0;
	void (*prev)(int);

	(void)state;
	at(path, sizeof(path), "full.ntp");
	w = ntp_writer_open(path, &fi, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = limit;
	prev = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (size_t i = 0; i < n && !ret; i++) {
		struct ntp_record one = rec(NTP_SIDE_HOST, (uint16_t)i, i, 1000 + i);

		ret = ntp_writer_add(w, &one);
	}
	assert_int_equal(ret, -EFBIG);
	assert_int_equal(ntp_writer_error(w), -EFBIG);
	assert_true(ntp_writer_records(w) >= 900 && ntp_writer_records(w) < 1000);
	assert_int_equal(ntp_writer_records(w) + ntp_writer_lost(w), n);
	assert_int_equal(ntp_writer_close(w, 2000), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, prev);

	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	while (ntp_reader_next(r, &x) == 1) {
		assert_int_equal(x.cid, (uint16_t)got);	/* in order, none damaged */
		got++;
	}
	assert_true(got >= 900);
	assert_int_equal(ntp_reader_stats(r)->corrupt, 0);
	assert_int_equal(ntp_reader_stats(r)->damaged_blocks, 0);
	ntp_reader_close(r);
	unlink(path);
}

/* Counts the intervals; past 100 it stops the pump, so a replay without end
 * fails the test instead of hanging it. */
static int count_interval(void *ctx, const struct ntp_snapshot *snap)
{
	(void)snap;
	return ++*(uint64_t *)ctx > 100 ? 1 : 0;
}

/* A replay of a file whose later records are years ahead (a damaged time
 * whose CRC holds, a clock set wrong): one interval over the gap, not one
 * per step of the grid (before: about 3e10 empty intervals, without end for
 * ntprof-top). The records on either side stay in their own intervals. */
static void test_replay_far_gap(void **state)
{
	enum { N = 40 };
	const uint64_t sec = 1000000000ull, gap = 31536000ull * 30 * sec;	/* 30 years */
	struct ntp_file_info fi = finfo(NTP_ROLE_HOST, sec, sec);
	struct ntp_record r[N];
	char path[300], err[256], *paths[1] = { path };
	struct ntp_files *f;
	struct ntp_model *m;
	struct ntp_pump *p;
	struct ntp_snapshot *tot = malloc(sizeof(*tot));
	uint64_t intervals = 0;

	(void)state;
	assert_non_null(tot);
	for (int i = 0; i < N; i++)
		r[i] = rec(NTP_SIDE_HOST, (uint16_t)i, 8u * (unsigned)i,
			   sec + 10000000ull * (unsigned)i + (i >= N / 2 ? gap : 0));
	at(path, sizeof(path), "gap.ntp");
	write_recs(path, &fi, r, N);
	f = ntp_files_open(paths, 1, err, sizeof(err));
	assert_non_null(f);
	m = ntp_model_new(ntp_files_model_config(f));
	assert_non_null(m);
	p = ntp_pump_new(&(struct ntp_pump_config){ .model = m, .start_ns = ntp_files_start(f),
						    .interval_ns = sec });
	assert_non_null(p);
	ntp_pump_add_sink(p, &(struct ntp_pump_sink){ .interval = count_interval, .ctx = &intervals });
	assert_int_equal(ntp_pump_run(p, &(struct ntp_pump_source){ ntp_files_pull, f }, NULL, NULL), 0);
	ntp_pump_finish(p, ntp_files_end(f), tot);
	/* before the gap, the gap, after it (and the last partial one) */
	assert_true(intervals >= 3 && intervals <= 5);
	assert_int_equal(tot->groups[0].sampled, N);
	ntp_pump_free(p);
	ntp_model_free(m);
	ntp_files_close(f);
	unlink(path);
	free(tot);
}

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* An output that is an input (same name, another spelling, a hard link), a
 * symbolic link or a directory is refused before anything is written. */
static void test_out_refuses(void **state)
{
	char in[300], lnk[300], hard[300], other[300], sub[300], err[512], buf[64];
	const char *ins[2];
	struct ntp_out o;
	FILE *f;

	(void)state;
	at(in, sizeof(in), "in.ntp");
	at(lnk, sizeof(lnk), "link.json");
	at(hard, sizeof(hard), "hard.json");
	at(other, sizeof(other), "other.json");
	f = fopen(in, "w");
	assert_non_null(f);
	fputs("recording", f);
	fclose(f);
	assert_int_equal(symlink(in, lnk), 0);
	assert_int_equal(link(in, hard), 0);
	ins[0] = in;
	ins[1] = NULL;
	assert_int_equal(ntp_out_open(&o, in, ins, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "the same file"));
	assert_int_equal(ntp_out_open(&o, hard, ins, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "the same file"));
	assert_int_equal(ntp_out_open(&o, lnk, ins, 2, err, sizeof(err)), -1);
	assert_int_equal(ntp_out_check(lnk, NULL, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));
	assert_int_equal(ntp_out_check(dir, NULL, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "directory"));
	/* two spellings of a file that does not exist yet */
	snprintf(sub, sizeof(sub), "%s/./other.json", dir);
	ins[0] = other;
	assert_int_equal(ntp_out_check(sub, ins, 1, err, sizeof(err)), -1);
	slurp(in, buf, sizeof(buf));
	assert_string_equal(buf, "recording");
	/* a new file: written whole, under its name only once closed */
	assert_int_equal(ntp_out_open(&o, other, ins + 1, 1, err, sizeof(err)), 0);
	fputs("report", o.f);
	assert_int_equal(access(other, F_OK), -1);
	assert_int_equal(ntp_out_close(&o, err, sizeof(err)), 0);
	slurp(other, buf, sizeof(buf));
	assert_string_equal(buf, "report");
	/* a discarded one leaves the old file */
	assert_int_equal(ntp_out_open(&o, other, NULL, 0, err, sizeof(err)), 0);
	fputs("half", o.f);
	ntp_out_discard(&o);
	slurp(other, buf, sizeof(buf));
	assert_string_equal(buf, "report");
	/* a recording that is not an input (report -j a.ntp b.ntp) is refused
	 * as an output; one that only names a recording is not */
	f = fopen(other, "w");
	assert_non_null(f);
	fputs(NTP_FILE_MAGIC "rest", f);
	fclose(f);
	assert_int_equal(ntp_out_open(&o, other, NULL, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is an ntprof recording"));
	assert_int_equal(ntp_out_check_report(other, NULL, 0, err, sizeof(err)), -1);
	assert_int_equal(ntp_out_check(other, NULL, 0, err, sizeof(err)), 0);
	slurp(other, buf, sizeof(buf));
	assert_string_equal(buf, NTP_FILE_MAGIC "rest");
	f = fopen(other, "w");
	assert_non_null(f);
	fputs("NTPROF", f);
	fclose(f);
	assert_int_equal(ntp_out_check_report(other, NULL, 0, err, sizeof(err)), 0);
	unlink(in);
	unlink(lnk);
	unlink(hard);
	unlink(other);
}

/* A failed write is an error with its errno, not a silent success. */
static void test_out_full_device(void **state)
{
	char err[512];
	struct ntp_out o;

	(void)state;
	if (access("/dev/full", W_OK))
		skip();
	assert_int_equal(ntp_out_open(&o, "/dev/full", NULL, 0, err, sizeof(err)), 0);
	for (int i = 0; i < 10000; i++)
		fputs("a line of a report that does not fit\n", o.f);
	assert_int_equal(ntp_out_close(&o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, strerror(ENOSPC)));
}

static void test_escape(void **state)
{
	char out[64];

	(void)state;
	assert_string_equal(ntp_escape("host\x1b]0;pwned\x07", out, sizeof(out)), "host\\x1b]0;pwned\\x07");
	assert_string_equal(ntp_escape("a\nb\x7f", out, sizeof(out)), "a\\x0ab\\x7f");
	/* UTF-8 kept, an encoded C1 control (U+009B, CSI) escaped */
	assert_string_equal(ntp_escape("caf\xc3\xa9 \xc2\x9b", out, sizeof(out)), "caf\xc3\xa9 \\xc2\\x9b");
	assert_int_equal(ntp_needs_escape("plain.ntp"), 0);
	assert_int_equal(ntp_needs_escape("x\ty"), 1);
	/* cut at a whole escape, always terminated */
	assert_string_equal(ntp_escape("ab\x01", out, 6), "ab");
	assert_string_equal(ntp_esc(NULL), "");
}

/* An error's line: the program's name, the message escaped whole however
 * long (every byte of it a control byte here: four times as long), and a
 * plain message as it is. */
static void test_escaped_line(void **state)
{
	char msg[3001], *buf = NULL, *want = malloc(12 + 4 * 3000 + 64);
	size_t len = 0, o;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	assert_non_null(want);
	memset(msg, '\x1b', 3000);
	msg[3000] = 0;
	ntp_put_escaped_line(f, "ntprof-top", msg);
	ntp_put_escaped_line(f, "ntprof", "no such file: a.ntp");
	fclose(f);
	o = (size_t)sprintf(want, "ntprof-top: ");
	for (int i = 0; i < 3000; i++)
		o += (size_t)sprintf(want + o, "\\x1b");
	sprintf(want + o, "\nntprof: no such file: a.ntp\n");
	assert_string_equal(buf, want);
	free(buf);
	free(want);
}

/* The text report and the comparison: the host name, kernel, a note and a
 * device name with control bytes come out escaped, never raw. */
static void test_report_names_escaped(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_report_meta meta;
	struct ntp_record r = rec(NTP_SIDE_HOST, 1, 8, 1000);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	snprintf(r.dev, sizeof(r.dev), "nv\x1b[2Jme");
	ntp_model_set_start(m, 0);
	ntp_model_ingest(m, &r);
	ntp_model_close_interval(m, 1000000000ull, s);
	memset(&meta, 0, sizeof(meta));
	meta.host_name = "host\x1b]0;pwned\x07";
	meta.host_kernel = "6.1\r";
	ntp_report_note(&meta, "file\x1b[31m.ntp was cut short");
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	ntp_report_print(f, s, &meta);
	ntp_compare_print(f, s, s, "a\x1b.ntp", "b.ntp");
	fclose(f);
	assert_null(memchr(buf, 0x1b, len));
	assert_null(memchr(buf, 0x07, len));
	assert_null(memchr(buf, '\r', len));
	assert_non_null(strstr(buf, "host\\x1b]0;pwned\\x07"));
	assert_non_null(strstr(buf, "nv\\x1b[2Jme"));
	assert_non_null(strstr(buf, "a\\x1b.ntp"));
	free(buf);
	ntp_model_free(m);
	free(s);
}

/* ntprof-top's cells: a control byte from a name is drawn as '?', never
 * sent to the terminal (ESC would start a sequence); UTF-8 is kept. */
static void test_screen_control_bytes(void **state)
{
	struct ntp_screen s;
	char *text;

	(void)state;
	assert_int_equal(ntp_screen_init(&s, 1, 20), 0);
	ntp_screen_put(&s, 0, 0, -1, 0, "h\x1b[2J\x07\xc2\x9b\xc3\xa9x");
	text = ntp_screen_to_text(&s);
	assert_non_null(text);
	assert_null(strchr(text, 0x1b));
	assert_null(strchr(text, 0x07));
	assert_non_null(strstr(text, "h?[2J??"));
	assert_non_null(strstr(text, "\xc3\xa9x"));
	free(text);
	ntp_screen_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_no_totals),
		cmocka_unit_test(test_model_extreme_times),
		cmocka_unit_test(test_align_extreme_clocks),
		cmocka_unit_test(test_replay_far_gap),
		cmocka_unit_test(test_writer_full_disk),
		cmocka_unit_test(test_out_refuses),
		cmocka_unit_test(test_out_full_device),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escaped_line),
		cmocka_unit_test(test_report_names_escaped),
		cmocka_unit_test(test_screen_control_bytes),
	};
	int ret;

	if (!mkdtemp(dir))
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return ret;
}
