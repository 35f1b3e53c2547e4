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

/* The controller's transport of dev ("tcp", "rdma", "pcie", "loop"), or "". */
static void transport_of(const char *root, const char *dev, char *out, size_t len)
{
	char blk[272], path[640];
	FILE *f;

	out[0] = '\0';
	tag_device(root, dev, blk, sizeof(blk));
	snprintf(path, sizeof(path), "%s/sys/block/%s/device/transport", root, blk);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(out, (int)len, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
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
