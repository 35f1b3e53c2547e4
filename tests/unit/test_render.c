// SPDX-License-Identifier: GPL-2.0
/*
 * test_render.c - ntprof-top's screens rendered from hand-built snapshots
 * into the cell buffer and compared with golden files in tests/golden/top/
 * (text, and the role layer for colours). UPDATE=1 rewrites the files.
 * Also: the layout's minimum-size contract over many sizes, themes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ui/render.h"
#include "ui/theme.h"
#include "top_fixture.h"

#define N_HIST 40
static struct ntp_snapshot snaps[N_HIST];
static const struct ntp_snapshot *ptrs[N_HIST];
static struct ntp_history hist = { ptrs, N_HIST };
static struct ntp_top_info info = {
	.host = "tb-host", .source = "replay run.ntp", .recording = 0, .glyphs = NTP_GLYPHS_UTF8,
};

static int setup(void **state)
{
	(void)state;
	for (int i = 0; i < N_HIST; i++) {
		fixture_snapshot(&snaps[i], 100 + i);
		snaps[i].seconds = 1;	/* the interval's own length, as its start and end say */
		ptrs[i] = &snaps[i];
	}
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Compares text with the golden file, or writes it when UPDATE=1. */
static void golden(const char *name, const char *text)
{
	const char *dir = getenv("NTP_GOLDEN_DIR") ? getenv("NTP_GOLDEN_DIR") : "tests/golden/top";
	char path[512];
	char *want;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (getenv("UPDATE") && !strcmp(getenv("UPDATE"), "1")) {
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs(text, f);
		fclose(f);
		return;
	}
	want = slurp(path);
	if (!want)
		fail_msg("%s: missing (UPDATE=1 writes it): %s", path, strerror(errno));
	if (strcmp(want, text)) {
		fprintf(stderr, "--- %s (golden)\n%s--- rendered\n%s", path, want, text);
		fail_msg("%s differs from the rendered screen", path);
	}
	free(want);
}

static void render_golden(const char *name, int rows, int cols, const struct ntp_view *v,
			  const struct ntp_top_info *in, int roles)
{
	struct ntp_screen s;
	char file[128], *text;

	assert_int_equal(ntp_screen_init(&s, rows, cols), 0);
	ntp_render(&s, v, &hist, in);
	text = ntp_screen_to_text(&s);
	snprintf(file, sizeof(file), "%s.txt", name);
	golden(file, text);
	free(text);
	if (roles) {
		text = ntp_screen_roles_to_text(&s);
		snprintf(file, sizeof(file), "%s.roles", name);
		golden(file, text);
		free(text);
	}
	ntp_screen_free(&s);
}

static void test_main_80x24(void **state)
{
	struct ntp_view v;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	render_golden("main_80x24", 24, 80, &v, &info, 1);
}

static void test_main_120x40(void **state)
{
	struct ntp_view v;
	struct ntp_top_info rec = info;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	v.selected = 2;
	rec.recording = 1;
	rec.rec_path = "ntprof-top-20261129-091500.ntp";
	rec.rec_records = 4242;
	render_golden("main_120x40", 40, 120, &v, &rec, 1);
}

static void test_minimum_size(void **state)
{
	struct ntp_view v;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	render_golden("main_min", NTP_MIN_ROWS, NTP_MIN_COLS, &v, &info, 0);
	render_golden("too_small", NTP_MIN_ROWS - 1, NTP_MIN_COLS + 10, &v, &info, 0);
}

static void test_mono_and_ascii(void **state)
{
	struct ntp_view v;
	struct ntp_top_info mono = info, ascii = info;

	(void)state;
	mono.glyphs = NTP_GLYPHS_MONO;
	ascii.glyphs = NTP_GLYPHS_ASCII;
	ntp_view_init(&v, 1000, 100);
	render_golden("mono_80x24", 24, 80, &v, &mono, 0);
	render_golden("ascii_80x24", 24, 80, &v, &ascii, 0);
}

static void test_detail_and_help(void **state)
{
	struct ntp_view v;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	v.mode = NTP_MODE_DETAIL;
	render_golden("detail_80x24", 24, 80, &v, &info, 0);
	v.selected = 2;
	render_golden("detail_hostonly_80x24", 24, 80, &v, &info, 0);
	v.mode = NTP_MODE_HELP;
	render_golden("help_80x24", 24, 80, &v, &info, 1);
}

static void test_filters_and_pause(void **state)
{
	struct ntp_view v;
	struct ntp_screen s;
	char *text;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	strcpy(v.ns, "nvme6n1");
	v.paused = 1;
	v.shown = 110;
	assert_int_equal(ntp_screen_init(&s, 24, 80), 0);
	ntp_render(&s, &v, &hist, &info);
	text = ntp_screen_to_text(&s);
	/* Only the host-only group, the paused interval, the '*' legend. */
	assert_non_null(strstr(text, "read 4KiB nvme6n1"));
	assert_null(strstr(text, "nvme1n1"));
	assert_non_null(strstr(text, "PAUSED #110"));
	assert_non_null(strstr(text, "net+target*"));
	assert_non_null(strstr(text, "97%*"));
	assert_non_null(strstr(text, "* network and target together"));
	free(text);
	v.ns[0] = 0;
	v.io = NTP_IO_WRITE;
	ntp_render(&s, &v, &hist, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "write 128KiB nvme1n1"));
	assert_null(strstr(text, "read 4KiB"));
	free(text);
	ntp_screen_free(&s);
}

/* More counted-only groups than the rows the blocks leave: those left out
 * are said, with their rate (the header's includes it), on the last row
 * they could have had, or in the caption when the blocks take every row. */
static void test_counted_left_out(void **state)
{
	static struct ntp_snapshot sp;
	const struct ntp_snapshot *one[1] = { &sp };
	struct ntp_history h1 = { one, 1 };
	struct ntp_view v;
	struct ntp_screen s;
	char *text;

	(void)state;
	fixture_snapshot(&sp, 7);
	sp.seconds = 1;
	sp.sampling = 1000;
	sp.n_groups = 7;
	/* groups 3..6 counted, no record: 1000, 1100, 1200, 1300 cmds/s */
	for (int i = 3; i < 7; i++) {
		struct ntp_snap_group *g = &sp.groups[i];

		memset(g, 0, sizeof(*g));
		g->io = NTP_IO_READ;
		g->len = 512u << i;
		strcpy(g->dev, "nvme2n1");
		g->commands = 1000 + 100 * (unsigned)(i - 3);
		g->rate = (double)g->commands;
	}
	ntp_view_init(&v, 1000, 1000);
	/* 28 rows: three blocks, then two rows: one line, the rest said */
	assert_int_equal(ntp_screen_init(&s, 28, 80), 0);
	ntp_render(&s, &v, &h1, &info);
	text = ntp_screen_to_text(&s);
	golden("sparse_left_80x28.txt", text);
	assert_non_null(strstr(text, "read 4KiB nvme2n1"));
	assert_non_null(strstr(text, "+3 groups counted only, 3.6k cmds/s (not shown: too few rows)"));
	free(text);
	ntp_screen_free(&s);
	/* 24 rows: the blocks take them all: the caption says it */
	assert_int_equal(ntp_screen_init(&s, 24, 80), 0);
	ntp_render(&s, &v, &h1, &info);
	text = ntp_screen_to_text(&s);
	golden("sparse_left_80x24.txt", text);
	assert_non_null(strstr(text, "io all  +4 counted "));
	free(text);
	ntp_screen_free(&s);
	/* wider: with their rate */
	assert_int_equal(ntp_screen_init(&s, 24, 120), 0);
	ntp_render(&s, &v, &h1, &info);
	text = ntp_screen_to_text(&s);
	golden("sparse_left_120x24.txt", text);
	assert_non_null(strstr(text, "io all  +4 counted only, 4.6k/s "));
	free(text);
	ntp_screen_free(&s);
}

/* Sparse sampling (-s 1000): a group the totals count with no record yet is a
 * line saying so, its count in the header's rate; the header's rate is the
 * filtered groups' and says whose. */
static void test_counted_not_sampled(void **state)
{
	static struct ntp_snapshot sp;
	const struct ntp_snapshot *one[1] = { &sp };
	struct ntp_history h1 = { one, 1 };
	struct ntp_snap_group *g;
	struct ntp_view v;
	struct ntp_screen s;
	char *text;

	(void)state;
	fixture_snapshot(&sp, 7);
	sp.seconds = 1;
	sp.sampling = 1000;
	/* groups 0 and 1 (nvme1n1) counted, no record in the interval: the
	 * first never sampled, the second sampled in earlier intervals */
	for (int i = 0; i < 2; i++) {
		g = &sp.groups[i];
		memset(g, 0, sizeof(*g));
		g->io = i ? NTP_IO_WRITE : NTP_IO_READ;
		g->len = i ? 131072 : 4096;
		strcpy(g->dev, "nvme1n1");
		g->commands = i ? 800 : 1234;
		g->rate = (double)g->commands;
		g->sampled_run = i ? 3 : 0;
	}
	ntp_view_init(&v, 1000, 1000);
	assert_int_equal(ntp_screen_init(&s, 24, 80), 0);
	ntp_render(&s, &v, &h1, &info);
	text = ntp_screen_to_text(&s);
	golden("sparse_80x24.txt", text);
	/* 1234 + 800 + the host-only group's 15500 */
	assert_non_null(strstr(text, " 17.5k cmds/s  lost"));
	assert_non_null(strstr(text, "read 4KiB nvme1n1     1.2k cmds/s counted, no command sampled yet (1 in 1000)"));
	assert_non_null(strstr(text, "write 128KiB nvme1n1  800 cmds/s counted, no sample in this interval"));
	free(text);
	/* the filter's namespace: its groups' rate, named */
	strcpy(v.ns, "nvme1n1");
	ntp_render(&s, &v, &h1, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, " 2.0k cmds/s of nvme1n1  lost"));
	assert_null(strstr(text, "nvme6n1"));
	free(text);
	v.io = NTP_IO_READ;
	ntp_render(&s, &v, &h1, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, " 1.2k cmds/s of nvme1n1 read  lost"));
	assert_null(strstr(text, "write 128KiB"));
	free(text);
	/* every row of a batch screen: the block, the two lines */
	v.ns[0] = 0;
	v.io = -1;
	assert_int_equal(ntp_render_rows_needed(&v, &h1), 3 + NTP_GROUP_ROWS + 2 + 1 + 1 < NTP_MIN_ROWS
			 ? NTP_MIN_ROWS : 3 + NTP_GROUP_ROWS + 2 + 1 + 1);
	ntp_screen_free(&s);
}

/* The layout contract: any size renders without writing outside the screen;
 * below the minimum the too-small screen names the minimum. */
static void test_every_size(void **state)
{
	struct ntp_view v;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	for (int rows = 0; rows <= 50; rows += (rows < 14 ? 1 : 7)) {
		for (int cols = 0; cols <= 160; cols += (cols < 70 ? 1 : 9)) {
			struct ntp_layout l;
			struct ntp_screen s;
			char *text;

			for (unsigned mode = NTP_MODE_MAIN; mode <= NTP_MODE_WHATIF; mode <<= 1) {
				v.mode = mode;
				assert_int_equal(ntp_screen_init(&s, rows, cols), 0);
				ntp_render(&s, &v, &hist, &info);
				text = ntp_screen_to_text(&s);
				int small = ntp_layout(rows, cols, &l) != 0;

				assert_int_equal(small, rows < NTP_MIN_ROWS || cols < NTP_MIN_COLS);
				if (small && rows >= 2 && cols >= 40)
					assert_non_null(strstr(text, "terminal too small: need 64x12"));
				if (!small) {
					assert_true(l.bar_w >= 10);
					assert_true(l.num_x + 35 <= cols);
					/* The status line is the last row. */
					assert_int_equal(s.cells[(rows - 1) * cols].role, NTP_ROLE_STATUS);
				}
				/* No line longer than the screen (cells are one column each). */
				for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
					*nl = 0;
					assert_true(ntp_utf8_width(line) <= cols);
				}
				free(text);
				ntp_screen_free(&s);
			}
		}
	}
}

static void test_waiting_and_empty(void **state)
{
	struct ntp_history none = { NULL, 0 };
	struct ntp_view v;
	struct ntp_screen s;
	char *text;

	(void)state;
	ntp_view_init(&v, 2000, 100);
	assert_int_equal(ntp_screen_init(&s, 24, 80), 0);
	ntp_render(&s, &v, &none, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "waiting for the first interval (2 s)"));
	free(text);
	strcpy(v.ns, "nvme9n9");
	ntp_render(&s, &v, &hist, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "no commands in this interval for this namespace"));
	free(text);
	ntp_screen_free(&s);
}

/* The 80x24 main screen of one snapshot alone, as text (the caller frees it). */
static char *render_one(const struct ntp_snapshot *t)
{
	const struct ntp_snapshot *tp[1] = { t };
	struct ntp_history th = { tp, 1 };
	struct ntp_view v;
	struct ntp_screen s;
	char *text;

	ntp_view_init(&v, 1000, 100);
	assert_int_equal(ntp_screen_init(&s, 24, 80), 0);
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	ntp_screen_free(&s);
	return text;
}

/* A target-only group: its network row is the target's receive path, marked
 * and explained, not an unmarked "network". */
static void test_target_only_marked(void **state)
{
	static struct ntp_snapshot t[1];
	char *text;

	(void)state;
	fixture_snapshot(t, 100);
	t->role = NTP_ROLE_TARGET;
	t->n_groups = 1;
	t->groups[0].target_only = 1;
	t->groups[0].host_only = 0;
	t->groups[0].stage[NTP_STAGE_HOST_BLOCK].present = 0;
	t->groups[0].stage[NTP_STAGE_HOST_DRIVER].present = 0;
	text = render_one(t);
	assert_non_null(strstr(text, "target recv~"));
	assert_non_null(strstr(text, "%~"));
	assert_non_null(strstr(text, "~ the target's receive path only"));
	assert_null(strstr(text, "  network "));
	free(text);
}

/* Memory that ran out (ntp_snapshot.oom) is said in the header, and only then. */
static void test_oom_marked(void **state)
{
	static struct ntp_snapshot t[1];
	char *text;

	(void)state;
	fixture_snapshot(t, 100);
	text = render_one(t);
	assert_null(strstr(text, "memory ran out"));
	free(text);
	t->oom = 1;
	text = render_one(t);
	assert_non_null(strstr(text, " lost 2  memory ran out  interval "));
	free(text);
}

/* Program runs the kernel skipped (ntp_snapshot.skipped_runs, live) are
 * said after lost, and only when there were any. */
static void test_skipped_runs_marked(void **state)
{
	static struct ntp_snapshot t[1];
	char *text;

	(void)state;
	fixture_snapshot(t, 100);
	text = render_one(t);
	assert_null(strstr(text, "skipped"));
	free(text);
	t->skipped_runs = 37;
	text = render_one(t);
	assert_non_null(strstr(text, " lost 2  skipped runs 37  interval "));
	free(text);
}

/* The header gives the shown interval's own length, as its JSON's "seconds"
 * (S saves both), and the setting apart once + or - changed it. */
static void test_header_interval_shown(void **state)
{
	static struct ntp_snapshot t[1];
	struct ntp_history th = { (const struct ntp_snapshot *const[]){ t }, 1 };
	struct ntp_screen s;
	struct ntp_view v;
	char *text;

	(void)state;
	fixture_snapshot(t, 100);
	t->seconds = 1;
	ntp_view_init(&v, 250, 100);	/* - - after a 1 s interval */
	assert_int_equal(ntp_screen_init(&s, 24, 80), 0);
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "  interval 1 s (setting 0.25 s)  rec off"));
	free(text);
	t->seconds = 0.25;
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "  interval 0.25 s  rec off"));
	assert_null(strstr(text, "setting"));
	free(text);
	ntp_screen_free(&s);
}

/* The detail view: "about" only before an estimated rate; '?' on a
 * percentile of too few samples, as the main screen and the report. */
static void test_detail_rate_and_markers(void **state)
{
	static struct ntp_snapshot t[1];
	struct ntp_history th = { (const struct ntp_snapshot *const[]){ t }, 1 };
	struct ntp_screen s;
	struct ntp_view v;
	char *text;

	(void)state;
	fixture_snapshot(t, 100);
	t->seconds = 1;
	ntp_view_init(&v, 1000, 100);
	v.mode = NTP_MODE_DETAIL;
	assert_int_equal(ntp_screen_init(&s, 24, 80), 0);
	/* 122 sampled: enough for a p99, not for a p99.9 */
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "122 sampled of about 12.2k commands/s"));
	assert_non_null(strstr(text, "p99 98.25, p99.9 99.29?\n"));
	assert_non_null(strstr(text, "    79.33    98.25\n"));
	free(text);
	t->groups[0].commands = 12200;	/* counted: exact */
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "122 sampled of 12.2k commands/s"));
	free(text);
	/* 31 sampled: the write group's p99s are the largest seen */
	v.selected = 1;
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "31 sampled of about"));
	assert_non_null(strstr(text, "?, p99.9 "));
	/* the component table's p99 column, the end-to-end row too */
	assert_non_null(strstr(text, " end to end "));
	assert_non_null(strstr(strstr(text, " end to end "), "?\n"));
	assert_ptr_equal(strchr(strstr(text, " end to end "), '\n') - 1, strstr(strstr(text, " end to end "), "?\n"));
	free(text);
	ntp_screen_free(&s);
}

/* The stage rows of a group of fewer samples than a mean needs (31, the
 * write): '?' after its means and Little's-law QDs; counted QDs
 * (--exact-queues) are every command's, not marked (docs/stage-model.md). */
static void test_stage_rows_few_marked(void **state)
{
	static struct ntp_snapshot t[1];
	struct ntp_history th = { (const struct ntp_snapshot *const[]){ t }, 1 };
	struct ntp_screen s;
	struct ntp_view v;
	char *text;

	(void)state;
	fixture_snapshot(t, 100);
	t->seconds = 1;
	ntp_view_init(&v, 1000, 100);
	assert_int_equal(ntp_screen_init(&s, 24, 80), 0);
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "mean 240.50?  p99 322.70? us"));
	assert_non_null(strstr(text, "44%    106.00?   131.00?   0.33?\n"));
	/* 122 sampled: enough, nothing marked but the p99.9 the screen does not show */
	assert_non_null(strstr(text, "72%      59.67     66.95    0.73\n"));
	free(text);
	for (unsigned i = 0; i < t->n_groups; i++)
		t->groups[i].qd_counted = 1;
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "44%    106.00?   131.00?    0.33\n"));
	free(text);
	/* a p99 of 100 ms or more, marked, takes a decimal less: the QD after
	 * it keeps its place and its mark (it was pushed right and cut) */
	for (unsigned i = 0; i < t->n_groups; i++) {
		t->groups[i].qd_counted = 0;
		for (int st = 0; st < NTP_STAGE_COUNT; st++)
			if (t->groups[i].stage[st].p99_us == 131.0) {
				t->groups[i].stage[st].mean_us = 20145.92;
				t->groups[i].stage[st].p99_us = 107479.04;
			}
	}
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, " 20145.92? 107479.0?   0.33?\n"));
	free(text);
	ntp_screen_free(&s);
}

/* text without its blanks and line ends */
static char *squeeze(const char *text)
{
	char *out = malloc(strlen(text) + 1), *o = out;

	assert_non_null(out);
	for (; *text; text++)
		if (*text != ' ' && *text != '\n')
			*o++ = *text;
	*o = 0;
	return out;
}

/* A path of 295 bytes in directories of 40, as a damaged file's note names. */
static void long_path(char path[300])
{
	memset(path, 'd', 300);
	memcpy(path, "/tmp/", 5);
	for (int i = 40; i < 290; i += 41)
		path[i] = '/';
	strcpy(path + 290, "/t.ntp");
}

/* A status message that fits the rows above the last is not cut
 * (docs/failures.md): its lines wrap over them, whole, at 64 columns too. */
static void test_status_not_cut(void **state)
{
	static struct ntp_snapshot t[1];
	struct ntp_history th = { (const struct ntp_snapshot *const[]){ t }, 1 };
	char path[300], *text, *flat, *sq;
	struct ntp_screen s;
	struct ntp_view v;

	(void)state;
	fixture_snapshot(t, 100);
	long_path(path);
	ntp_view_init(&v, 1000, 100);
	ntp_view_msg(&v, "replay ended: 8990 records read, 1024 dropped\n%s is damaged (block at offset 256 "
		     "fails its CRC): 3983 records read, 1024 dropped", path);
	assert_int_equal(ntp_screen_init(&s, NTP_MIN_ROWS, NTP_MIN_COLS), 0);
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	/* the message is on the last rows, whole (wrapped at blanks) */
	flat = squeeze(strstr(text, "\n replay ended"));
	sq = squeeze(v.msg);
	assert_non_null(strstr(flat, sq));
	free(sq);
	assert_non_null(strstr(text, "\n replay ended: 8990 records read, 1024 dropped\n"));
	/* the header stays */
	assert_non_null(strstr(text, " tb-host  host+target NVMe/TCP  1 in 100 sampled "));
	assert_non_null(strstr(text, " #100\n"));
	free(flat);
	free(text);
	ntp_screen_free(&s);
}

/* A message longer than the rows the status line may take (two long notes
 * at 64x12) ends its last row with a mark, "..." with ASCII glyphs: what is
 * cut is said (the notes are whole on stderr after q, docs/top.md). */
static void test_status_cut_marked(void **state)
{
	static struct ntp_snapshot t[1];
	struct ntp_history th = { (const struct ntp_snapshot *const[]){ t }, 1 };
	struct ntp_top_info ai = info;
	char path[300], *text, *last;
	struct ntp_screen s;
	struct ntp_view v;

	(void)state;
	fixture_snapshot(t, 100);
	long_path(path);
	ntp_view_init(&v, 1000, 100);
	ntp_view_msg(&v, "replay ended: 8990 records\n%s/h is damaged (block at offset 256 fails its CRC): 3983 "
		     "records read, 1024 dropped; the intervals are of the records read\n%s/t is damaged (block at "
		     "offset 256 fails its CRC): 3983 records read, 1024 dropped; the intervals are of the records read: END",
		     path, path);
	assert_int_equal(ntp_screen_init(&s, NTP_MIN_ROWS, NTP_MIN_COLS), 0);
	for (int g = 0; g < 2; g++) {
		ai.glyphs = g ? NTP_GLYPHS_ASCII : NTP_GLYPHS_UTF8;
		ntp_render(&s, &v, &th, &ai);
		text = ntp_screen_to_text(&s);
		/* the last row: cut, and marked so, within the width */
		text[strlen(text) - 1] = 0;
		last = strrchr(text, '\n') + 1;
		assert_non_null(strstr(last, g ? " ..." : " \u2026"));
		assert_true(strlen(last) <= NTP_MIN_COLS + 2);
		assert_null(strstr(text, "END"));
		/* the header stays */
		assert_non_null(strstr(text, " #100\n"));
		free(text);
	}
	/* one that fits has no mark */
	ntp_view_msg(&v, "replay ended: 8990 records");
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	assert_null(strstr(text, "\u2026"));
	free(text);
	ntp_screen_free(&s);
}

/* Counts the non-overlapping occurrences of needle in text. */
static int count_of(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Notes that fill the view's buffer (cut there) on a screen too small for
 * them as well: one mark, the status line's, no "..." of the buffer's
 * before it; a text that fills the buffer exactly is not cut. */
static void test_status_one_mark(void **state)
{
	static struct ntp_snapshot t[1];
	struct ntp_history th = { (const struct ntp_snapshot *const[]){ t }, 1 };
	struct ntp_top_info ai = info;
	static struct ntp_view v;
	static char line[NTP_VIEW_MSG_LEN];
	struct ntp_screen s;
	char *text;
	size_t len;

	(void)state;
	fixture_snapshot(t, 100);
	ntp_view_init(&v, 1000, 100);
	ntp_view_msg(&v, "replay ended: 8990 records");
	memset(line, 'x', 1000);
	line[1000] = 0;
	for (int i = 0; i < 40; i++)
		ntp_view_msg_add(&v, line);
	assert_true(v.msg_cut);
	assert_true(strlen(v.msg) < sizeof(v.msg));
	assert_null(strstr(v.msg, "..."));
	assert_int_equal(ntp_screen_init(&s, NTP_MIN_ROWS, NTP_MIN_COLS), 0);
	for (int g = 0; g < 2; g++) {
		ai.glyphs = g ? NTP_GLYPHS_ASCII : NTP_GLYPHS_UTF8;
		ntp_render(&s, &v, &th, &ai);
		text = ntp_screen_to_text(&s);
		assert_int_equal(count_of(text, g ? "..." : "\u2026"), 1);
		free(text);
	}
	ntp_screen_free(&s);
	/* cut but fitting the screen (a tall one): still marked, once */
	ntp_view_init(&v, 1000, 100);
	memset(line, 'y', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	ntp_view_msg(&v, "%s!", line);	/* one byte more than the buffer holds */
	assert_true(v.msg_cut);
	ntp_view_msg(&v, "short");
	assert_false(v.msg_cut);
	ntp_view_msg_add(&v, line);	/* "short\n" and it do not fit */
	assert_true(v.msg_cut);
	v.msg[200] = 0;		/* as if only 200 bytes were left of it: fits 40 rows */
	assert_int_equal(ntp_screen_init(&s, 40, 120), 0);
	ntp_render(&s, &v, &th, &info);
	text = ntp_screen_to_text(&s);
	assert_int_equal(count_of(text, "\u2026"), 1);
	free(text);
	ntp_screen_free(&s);
	/* exactly the buffer: whole, not cut */
	ntp_view_init(&v, 1000, 100);
	len = sizeof(v.msg) - 1 - strlen("first\n");
	line[len] = 0;
	ntp_view_msg(&v, "first");
	ntp_view_msg_add(&v, line);
	assert_false(v.msg_cut);
	assert_int_equal(strlen(v.msg), sizeof(v.msg) - 1);
	/* a character cut short goes whole: no half of "µ" at the end */
	ntp_view_init(&v, 1000, 100);
	memcpy(line + len - 1, "\u00b5", 2);	/* its second byte one past the buffer */
	line[len + 1] = 0;
	ntp_view_msg(&v, "first");
	ntp_view_msg_add(&v, line);
	assert_true(v.msg_cut);
	assert_int_equal((unsigned char)v.msg[strlen(v.msg) - 1], 'y');
}

/* A message not drawn yet outlives a key pressed in the same pass of the
 * loop (src/top/main.c): the key's own message goes under it; once drawn,
 * a key clears it as any message. */
static void test_message_held_over_key(void **state)
{
	static struct ntp_msg_hold held;
	static struct ntp_view v;
	struct ntp_view_ctx ctx = { 0 };
	unsigned r;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	ntp_view_msg(&v, "replay ended: 8990 records");
	ntp_view_msg_add(&v, "t.ntp is cut short");
	/* not drawn: a key that says nothing keeps it */
	ntp_view_msg_hold(&v, &held, 1);
	assert_string_equal(v.msg, "");
	r = ntp_view_apply(&v, ntp_key_action(&v, 'd'), &ctx);
	(void)r;
	ntp_view_msg_unhold(&v, &held);
	assert_string_equal(v.msg, "replay ended: 8990 records\nt.ntp is cut short");
	/* not drawn: a key that says something says it under it */
	ntp_view_msg_hold(&v, &held, 1);
	ntp_view_apply(&v, ntp_key_action(&v, 't'), &ctx);
	ntp_view_msg_unhold(&v, &held);
	assert_string_equal(v.msg, "replay ended: 8990 records\nt.ntp is cut short\nI/O type: read");
	/* drawn: the key's message replaces it */
	ntp_view_msg_hold(&v, &held, 0);
	ntp_view_apply(&v, ntp_key_action(&v, 't'), &ctx);
	ntp_view_msg_unhold(&v, &held);
	assert_string_equal(v.msg, "I/O type: write");
	/* drawn, and the key says nothing: cleared */
	ntp_view_msg_hold(&v, &held, 0);
	ntp_view_msg_unhold(&v, &held);
	assert_string_equal(v.msg, "");
}

/* The key hint comes from the key table: each item a key and what it does,
 * q quit always, the most important that fit (docs/top.md, "Keys"); at 80
 * columns (78 for the hint) the main screen shows every key with an item,
 * the two that write files (w, S) included. */
static void test_key_footer(void **state)
{
	struct ntp_view v;
	char buf[256];

	(void)state;
	ntp_view_init(&v, 1000, 100);
	ntp_key_footer(&v, 78, buf, sizeof(buf));
	assert_string_equal(buf, "h help  d detail  n ns  t type  s sampling  Space pause  w rec  S save  q quit");
	ntp_key_footer(&v, NTP_MIN_COLS - 2, buf, sizeof(buf));
	assert_string_equal(buf, "h help  d detail  n ns  Space pause  w rec  S save  q quit");
	/* too narrow for all but the first */
	ntp_key_footer(&v, 6, buf, sizeof(buf));
	assert_string_equal(buf, "q quit");
	ntp_key_footer(&v, 5, buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* a replay: its sampling is the recording's */
	v.sampling_fixed = 1;
	ntp_key_footer(&v, 200, buf, sizeof(buf));
	assert_string_equal(buf, "h help  d detail  n ns  t type  Space pause  w rec  S save  q quit");
	v.sampling_fixed = 0;
	/* paused: Space resumes, the steps come first */
	v.paused = 1;
	ntp_key_footer(&v, 78, buf, sizeof(buf));
	assert_string_equal(buf, "h help  d detail  n ns  Space resume  Left/Right step  w rec  S save  q quit");
	v.paused = 0;
	/* detail: Esc goes back (d as well: no "d detail") */
	v.mode = NTP_MODE_DETAIL;
	ntp_key_footer(&v, 78, buf, sizeof(buf));
	assert_string_equal(buf, "h help  Esc back  n ns  t type  s sampling  Space pause  w rec  S save  q quit");
	/* what-if: its own keys before the others */
	v.mode = NTP_MODE_WHATIF;
	ntp_key_footer(&v, 78, buf, sizeof(buf));
	assert_string_equal(buf, "h help  Esc back  < > target QD  [ ] run's QD  w rec  S save  q quit");
	v.mode = NTP_MODE_HELP;
	ntp_key_footer(&v, 78, buf, sizeof(buf));
	assert_string_equal(buf, "Esc back  q quit");
	/* at any width: no item shown while a more important one is not */
	v.mode = NTP_MODE_MAIN;
	for (int width = 0; width <= 120; width++) {
		int shown_worst = -1, missing_best = NTP_FOOT_RANKS + 1;

		ntp_key_footer(&v, width, buf, sizeof(buf));
		assert_true((int)strlen(buf) <= width);
		for (int i = 0; i < ntp_n_bindings; i++) {
			const struct ntp_binding *b = &ntp_bindings[i];

			if (!b->foot || !(b->modes & v.mode) || b->act == NTP_ACT_STEP_BACK)
				continue;
			if (strstr(buf, b->foot)) {
				if (b->foot_rank > shown_worst)
					shown_worst = b->foot_rank;
			} else if (b->foot_rank < missing_best) {
				missing_best = b->foot_rank;
			}
		}
		assert_true(shown_worst < missing_best);
	}
}

static void test_screen_put_clips_and_replaces(void **state)
{
	struct ntp_screen s;
	char *text;

	(void)state;
	assert_int_equal(ntp_screen_init(&s, 2, 5), 0);
	assert_int_equal(ntp_screen_put(&s, 0, 3, -1, NTP_ROLE_TEXT, "µs▁xyz"), 5);
	ntp_screen_put(&s, 1, 0, -1, NTP_ROLE_WARN, "a\xff" "b");
	text = ntp_screen_to_text(&s);
	assert_string_equal(text, "   µs\na?b\n");
	free(text);
	text = ntp_screen_roles_to_text(&s);
	assert_string_equal(text, "\nnnn\n");
	free(text);
	ntp_screen_free(&s);
}

static void test_builtin_themes_are_the_files(void **state)
{
	(void)state;
	for (int i = 0; i < ntp_n_builtin_themes; i++) {
		char path[256], err[256], *text;
		struct ntp_theme t;

		snprintf(path, sizeof(path), "themes/%s.theme", ntp_builtin_themes[i].name);
		text = slurp(path);
		assert_non_null(text);
		assert_string_equal(text, ntp_builtin_themes[i].text);
		free(text);
		assert_int_equal(ntp_theme_load(ntp_builtin_themes[i].name, &t, err, sizeof(err)), 0);
		assert_int_equal(ntp_theme_load(path, &t, err, sizeof(err)), 0);
	}
}

static void test_theme_fallbacks_and_errors(void **state)
{
	struct ntp_theme t;
	char err[256];
	short fg, bg;
	unsigned a;

	(void)state;
	assert_int_equal(ntp_theme_parse("bar-network 214,bright-yellow,yellow default bold,dim\n", "x", &t, err,
					 sizeof(err)), 0);
	ntp_theme_resolve(&t, NTP_ROLE_BAR_NETWORK, 256, &fg, &bg, &a);
	assert_int_equal(fg, 214);
	assert_int_equal(bg, -1);
	assert_int_equal(a, NTP_ATTR_BOLD | NTP_ATTR_DIM);
	ntp_theme_resolve(&t, NTP_ROLE_BAR_NETWORK, 16, &fg, &bg, &a);
	assert_int_equal(fg, 11);
	ntp_theme_resolve(&t, NTP_ROLE_BAR_NETWORK, 8, &fg, &bg, &a);
	assert_int_equal(fg, 3);
	ntp_theme_resolve(&t, NTP_ROLE_BAR_NETWORK, 0, &fg, &bg, &a);
	assert_int_equal(fg, -1);
	ntp_theme_resolve(&t, NTP_ROLE_TITLE, 256, &fg, &bg, &a);	/* not named: defaults */
	assert_int_equal(fg, -1);
	assert_int_equal(a, 0);

	assert_int_equal(ntp_theme_parse("# ok\n\nbogus red blue -\n", "my.theme", &t, err, sizeof(err)), -1);
	assert_string_equal(err, "my.theme:3: unknown role 'bogus' (themes/README.md lists them)");
	assert_int_equal(ntp_theme_parse("title pink blue -\n", "my.theme", &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "my.theme:1: foreground colour 'pink'"));
	assert_int_equal(ntp_theme_parse("title red 256 -\n", "t", &t, err, sizeof(err)), -1);
	assert_int_equal(ntp_theme_parse("title red blue blink\n", "t", &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "attribute 'blink'"));
	assert_int_equal(ntp_theme_parse("title red\n", "t", &t, err, sizeof(err)), -1);
	assert_int_equal(ntp_theme_load("/nonexistent/x.theme", &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "theme '/nonexistent/x.theme'"));
}

/* The what-if view over intervals of a workload whose QD was tuned 1, 2, 8:
 * built from a known network (fixture_level_interval), so the fitted
 * parallelism and the knee can be read off the screen. */
static void test_whatif_view(void **state)
{
	static struct ntp_snapshot wsnap[3];
	static const struct ntp_snapshot *wp[3] = { &wsnap[0], &wsnap[1], &wsnap[2] };
	struct ntp_history wh = { wp, 3 }, saved = hist;
	struct ntp_wi_params par = { .tags = 16, .hw_queues = 2, .tags_from = "sysfs" };
	struct ntp_top_info in = info;
	struct ntp_view_ctx ctx = { .n_visible = 1, .n_hist = 3, .oldest = 0, .newest = 2 };
	struct ntp_screen s;
	struct ntp_view v;
	char *text;

	(void)state;
	fixture_level_interval(&wsnap[0], 0, 1, 1);
	fixture_level_interval(&wsnap[1], 1, 2, 1);
	fixture_level_interval(&wsnap[2], 2, 8, 1);
	in.wi = &par;
	ntp_view_init(&v, 1000, 1);
	assert_int_equal(ntp_key_action(&v, 'W'), NTP_ACT_WHATIF);
	ntp_view_apply(&v, NTP_ACT_WHATIF, &ctx);
	assert_int_equal(v.mode, NTP_MODE_WHATIF);
	/* 16 -> 32, and back down to 8 */
	ntp_view_apply(&v, ntp_key_action(&v, '>'), &ctx);
	assert_int_equal(v.wi_qd, 32);
	ntp_view_apply(&v, ntp_key_action(&v, '<'), &ctx);
	ntp_view_apply(&v, ntp_key_action(&v, ','), &ctx);
	assert_int_equal(v.wi_qd, 8);
	hist = wh;
	render_golden("whatif_80x24", 24, 80, &v, &in, 1);
	v.wi_qd = 32;
	render_golden("whatif_120x30", 30, 120, &v, &in, 0);
	/* the storage is fitted to 4 servers and saturates first; past 16
	 * tags the rest waits in the host's block layer */
	assert_int_equal(ntp_screen_init(&s, 30, 120), 0);
	ntp_render(&s, &v, &hist, &in);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "4 srv fitted"));
	assert_non_null(strstr(text, "saturates first: storage"));
	assert_non_null(strstr(text, "past them commands wait in the block layer"));
	free(text);
	/* paused on the first interval: nothing earlier, one load level */
	v.paused = 1;
	v.shown = 0;
	ntp_render(&s, &v, &hist, &in);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "delay (1 load)"));
	assert_non_null(strstr(text, "1 load level seen"));
	free(text);
	/* the run's QD given (--what-if-qd-was, keys [ ]): 0 (inferred), 1, 2
	 * ... 16; the model is calibrated to it, so the prediction at that QD
	 * is the measured interval, and the view says the QD was given */
	v.paused = 0;
	par.tags_from = "recording";
	assert_int_equal(v.wi_qd_was, 0);
	for (int i = 0; i < 5; i++)
		ntp_view_apply(&v, ntp_key_action(&v, ']'), &ctx);
	assert_int_equal(v.wi_qd_was, 16);
	assert_string_equal(v.msg, "the run's QD: 16 (given)");
	v.wi_qd = 16;
	v.msg[0] = 0;
	render_golden("whatif_given_80x24", 24, 80, &v, &in, 0);
	ntp_render(&s, &v, &hist, &in);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "measured  QD 16      2.0k IOPS  mean    3960.1  p99    5148.1 us  QD given"));
	assert_non_null(strstr(text, "predicted QD 16      2.0k IOPS  mean    3960.1  p99    5148.1 us"));
	assert_non_null(strstr(text, "host tags: 16 per queue, 2 queues (recording)"));
	free(text);
	for (int i = 0; i < 5; i++)
		ntp_view_apply(&v, ntp_key_action(&v, '['), &ctx);
	assert_int_equal(v.wi_qd_was, 0);
	assert_string_equal(v.msg, "the run's QD: inferred (rate x mean)");
	ntp_view_apply(&v, ntp_key_action(&v, '['), &ctx);
	assert_int_equal(v.wi_qd_was, 0);
	ntp_render(&s, &v, &hist, &in);
	text = ntp_screen_to_text(&s);
	assert_non_null(strstr(text, "measured  QD 8 "));
	assert_non_null(strstr(text, "QD inferred"));
	free(text);
	ntp_screen_free(&s);
	hist = saved;
	/* Esc and W both go back */
	ntp_view_apply(&v, ntp_key_action(&v, NTP_KEY_ESC), &ctx);
	assert_int_equal(v.mode, NTP_MODE_MAIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_main_80x24),
		cmocka_unit_test(test_main_120x40),
		cmocka_unit_test(test_minimum_size),
		cmocka_unit_test(test_mono_and_ascii),
		cmocka_unit_test(test_counted_not_sampled),
		cmocka_unit_test(test_counted_left_out),
		cmocka_unit_test(test_detail_and_help),
		cmocka_unit_test(test_header_interval_shown),
		cmocka_unit_test(test_detail_rate_and_markers),
		cmocka_unit_test(test_stage_rows_few_marked),
		cmocka_unit_test(test_status_not_cut),
		cmocka_unit_test(test_status_cut_marked),
		cmocka_unit_test(test_status_one_mark),
		cmocka_unit_test(test_message_held_over_key),
		cmocka_unit_test(test_key_footer),
		cmocka_unit_test(test_filters_and_pause),
		cmocka_unit_test(test_whatif_view),
		cmocka_unit_test(test_every_size),
		cmocka_unit_test(test_waiting_and_empty),
		cmocka_unit_test(test_screen_put_clips_and_replaces),
		cmocka_unit_test(test_target_only_marked),
		cmocka_unit_test(test_oom_marked),
		cmocka_unit_test(test_skipped_runs_marked),
		cmocka_unit_test(test_builtin_themes_are_the_files),
		cmocka_unit_test(test_theme_fallbacks_and_errors),
	};

	return cmocka_run_group_tests_name("render", tests, setup, NULL);
}
