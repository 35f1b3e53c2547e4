// SPDX-License-Identifier: GPL-2.0
/* hostq.c - nr_requests and the hardware queues of a namespace in sysfs (hostq.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hostq.h"

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Hardware queues: the directories under queue's mq/ (one per hctx). */
static uint32_t count_mq(const char *root, const char *blk)
{
	char path[640];
	struct dirent *e;
	uint32_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/sys/block/%s/mq", root, blk);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
			n++;
	closedir(d);
	return n;
}

/* The block device that holds dev's tags: a multipath head (nvme0n1) is
 * bio-based, its tags are those of its paths (nvme0c0n1, hidden), which
 * blk-mq allocates; the first path found stands for them all. */
static void tag_device(const char *root, const char *dev, char *blk, size_t len)
{
	char path[512], want[64], prefix[32];
	unsigned ctrl, ns, c2, p, n2;
	struct dirent *e;
	DIR *d;

	snprintf(blk, len, "%s", dev);
	snprintf(path, sizeof(path), "%s/sys/block", root);
	if (sscanf(dev, "nvme%un%u", &ctrl, &ns) != 2 || !(d = opendir(path)))
		return;
	snprintf(want, sizeof(want), "n%u", ns);
	snprintf(prefix, sizeof(prefix), "nvme%uc", ctrl);
	while ((e = readdir(d))) {
		if (!strncmp(e->d_name, prefix, strlen(prefix)) &&
		    sscanf(e->d_name, "nvme%uc%un%u", &c2, &p, &n2) == 3 && n2 == ns) {
			snprintf(blk, len, "%s", e->d_name);
			break;
		}
	}
	closedir(d);
}

int ntp_host_queues(const char *root, const char *dev, uint32_t *tags, uint32_t *hw_queues)
{
	char path[640], blk[272];
	long v;

	*tags = *hw_queues = 0;
	tag_device(root, dev, blk, sizeof(blk));
	snprintf(path, sizeof(path), "%s/sys/block/%s/queue/nr_requests", root, blk);
	v = read_long(path);
	if (v <= 0)
		return -1;
	*tags = (uint32_t)v;
	*hw_queues = count_mq(root, blk);
	return 0;
}

/* The namespace as the host's records name it (bpf/ntprof.bpf.c takes the
 * request's disk name: the head's with multipath), from a /sys/block entry:
 * nvme0n1 and nvme0c1n1 both give nvme0n1; 0, or -1 for other devices. */
static int head_name(const char *name, char *head, size_t len)
{
	unsigned s, c, n;
	int used = 0;

	if (sscanf(name, "nvme%uc%un%u%n", &s, &c, &n, &used) == 3 && !name[used]) {
		snprintf(head, len, "nvme%un%u", s, n);
		return 0;
	}
	used = 0;
	if (sscanf(name, "nvme%un%u%n", &s, &n, &used) == 2 && !name[used]) {
		snprintf(head, len, "nvme%un%u", s, n);
		return 0;
	}
	return -1;
}

/* The first line of a file, without its newline, or "" */
static void first_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	if (!f)
		return;
	if (!fgets(out, (int)len, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

/* The controller's transport of dev ("tcp", "rdma", "pcie", "loop"), or "". */
static void transport_of(const char *root, const char *dev, char *out, size_t len)
{
	char blk[272], path[640];

	tag_device(root, dev, blk, sizeof(blk));
	snprintf(path, sizeof(path), "%s/sys/block/%s/device/transport", root, blk);
	first_line(path, out, len);
}

static int by_name(const void *a, const void *b)
{
	return strverscmp(((const struct ntp_hostq *)a)->dev, ((const struct ntp_hostq *)b)->dev);
}

size_t ntp_host_queues_scan(const char *root, uint8_t transport, const char *session,
			    struct ntp_hostq *out, size_t max)
{
	char path[512], head[NTP_DEV_LEN + 16], tr[32];
	const char *want = ntp_transport_name(transport);
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	if (session && session[0]) {
		size_t len = strnlen(session, NTP_DEV_LEN);

		if (max && len < NTP_DEV_LEN &&
		    !ntp_host_queues(root, session, &out[0].tags, &out[0].hw_queues)) {
			memset(out[0].dev, 0, NTP_DEV_LEN);
			memcpy(out[0].dev, session, len);
			return 1;
		}
		return 0;
	}
	snprintf(path, sizeof(path), "%s/sys/block", root);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		size_t i;

		if (head_name(e->d_name, head, sizeof(head)) || strlen(head) >= NTP_DEV_LEN)
			continue;
		for (i = 0; i < n && strcmp(out[i].dev, head); i++)
			;
		if (i < n)
			continue;
		transport_of(root, head, tr, sizeof(tr));
		if (strcmp(tr, want))
			continue;
		memset(out[n].dev, 0, NTP_DEV_LEN);
		memcpy(out[n].dev, head, strlen(head));
		if (!ntp_host_queues(root, head, &out[n].tags, &out[n].hw_queues))
			n++;
	}
	closedir(d);
	qsort(out, n, sizeof(*out), by_name);
	return n;
}

/* ---- the transport check (hostq.h) ---- */

const char *ntp_sys_root(void)
{
	const char *r = getenv("NTPROF_SYS_ROOT");

	return r ? r : "";
}

#define TR_MAX 32	/* controllers (ports) looked at */

struct tr_ent {
	char name[64];		/* "nvme0", or the port's ID */
	char tr[16];		/* "tcp", "rdma", "pcie", ... */
	char ns[160];		/* "nvme0n1, nvme0n2" (controllers) */
};

static int by_ent(const void *a, const void *b)
{
	return strverscmp(((const struct tr_ent *)a)->name, ((const struct tr_ent *)b)->name);
}

static int by_str(const void *a, const void *b)
{
	return strverscmp(a, b);
}

/* A controller's namespaces, by head name, in name order: the entries
 * nvmeXnY (or nvmeXcZnY, a multipath path) of its sysfs directory. */
static void ctrl_namespaces(const char *dir, char *out, size_t len)
{
	char heads[16][NTP_DEV_LEN], h[NTP_DEV_LEN + 16];
	struct dirent *e;
	size_t n = 0, k = 0;
	DIR *d = opendir(dir);

	out[0] = '\0';
	if (!d)
		return;
	while ((e = readdir(d)) && n < 16) {
		size_t i;

		if (head_name(e->d_name, h, sizeof(h)) || strlen(h) >= NTP_DEV_LEN)
			continue;
		for (i = 0; i < n && strcmp(heads[i], h); i++)
			;
		if (i == n)
			snprintf(heads[n++], NTP_DEV_LEN, "%s", h);
	}
	closedir(d);
	qsort(heads, n, sizeof(heads[0]), by_str);
	for (size_t i = 0; i < n && k < len; i++)
		k += (size_t)snprintf(out + k, len - k, "%s%s", i ? ", " : "", heads[i]);
}

/* The controllers (ports = 0) or the nvmet ports (ports = 1) into e[]: how
 * many; *cut set when there were more than max. */
static size_t tr_scan(const char *root, int ports, struct tr_ent *e, size_t max, int *cut)
{
	char dir[512], path[1024];
	struct dirent *de;
	size_t n = 0;
	unsigned u;
	int used;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s%s", root, ports ? "/sys/kernel/config/nvmet/ports" : "/sys/class/nvme");
	*cut = 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		used = 0;
		if (!ports && !(sscanf(de->d_name, "nvme%u%n", &u, &used) == 1 && !de->d_name[used]))
			continue;
		if (n == max) {
			*cut = 1;
			break;
		}
		snprintf(e[n].name, sizeof(e[n].name), "%.63s", de->d_name);
		snprintf(path, sizeof(path), "%s/%s/%s", dir, de->d_name, ports ? "addr_trtype" : "transport");
		first_line(path, e[n].tr, sizeof(e[n].tr));
		e[n].ns[0] = '\0';
		if (!ports) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			ctrl_namespaces(path, e[n].ns, sizeof(e[n].ns));
		}
		if (e[n].tr[0])
			n++;
	}
	closedir(d);
	qsort(e, n, sizeof(*e), by_ent);
	return n;
}

void ntp_transport_found(const char *root, int host, int target, char *buf, size_t len)
{
	struct tr_ent e[TR_MAX];
	size_t k = 0;
	int cut;

	if (!len)
		return;
	buf[0] = '\0';
	for (int ports = 0; ports < 2; ports++) {
		size_t n;

		if (!(ports ? target : host))
			continue;
		n = tr_scan(root, ports, e, TR_MAX, &cut);
		if (k < len)
			k += (size_t)snprintf(buf + k, len - k, "%s%s:", k ? "; " : "",
					      ports ? "nvmet ports" : "nvme controllers");
		if (!n && k < len)
			k += (size_t)snprintf(buf + k, len - k, " none");
		for (size_t i = 0; i < n && k < len; i++)
			k += (size_t)snprintf(buf + k, len - k, "%s %s %s%s%s%s", i ? "," : "", e[i].name, e[i].tr,
					      e[i].ns[0] ? " (" : "", e[i].ns, e[i].ns[0] ? ")" : "");
		if (cut && k < len)
			k += (size_t)snprintf(buf + k, len - k, ", more not looked at");
	}
}

static const char *fabric_name(const char *tr)
{
	return !strcmp(tr, "tcp") ? "NVMe/TCP" : !strcmp(tr, "rdma") ? "NVMe/RDMA" : NULL;
}

int ntp_transport_mismatch(const char *root, uint8_t transport, int host, int target, char *buf, size_t len)
{
	const char *want = ntp_transport_name(transport);
	const char *other = transport == NTP_TRANSPORT_TCP ? "rdma" : "tcp";
	char what[2][256] = { "", "" };
	struct tr_ent e[TR_MAX];
	int things = 0, cut;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (int ports = 0; ports < 2; ports++) {
		size_t n, first = TR_MAX, more = 0;
		int have = 0;

		if (!(ports ? target : host))
			continue;
		n = tr_scan(root, ports, e, TR_MAX, &cut);
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(e[i].tr, want))
				have = 1;
			else if (!strcmp(e[i].tr, other) && first == TR_MAX)
				first = i;
			else if (!strcmp(e[i].tr, other))
				more++;
		}
		/* one of -t's transport: the recording sees it (a PCIe or
		 * loop controller is none of ntprof's business) */
		if (have || first == TR_MAX || cut)	/* cut: one not looked at may be -t's */
			continue;
		if (ports)
			snprintf(what[1], sizeof(what[1]), "nvmet port %s", e[first].name);
		else
			snprintf(what[0], sizeof(what[0]), "%s%s%s%s", e[first].name, e[first].ns[0] ? " (" : "",
				 e[first].ns, e[first].ns[0] ? ")" : "");
		if (more)
			snprintf(what[ports] + strlen(what[ports]), sizeof(what[ports]) - strlen(what[ports]),
				 " and %zu more %s", more, ports ? (more > 1 ? "ports" : "port") :
				 (more > 1 ? "controllers" : "controller"));
		things += 1 + (more > 0);
	}
	if (!things)
		return 0;
	snprintf(buf, len, "%s%s%s %s %s, not %s: use -t %s", what[0], what[0][0] && what[1][0] ? " and " : "",
		 what[1], things > 1 ? "are" : "is", fabric_name(other), fabric_name(want), other);
	return 1;
}
