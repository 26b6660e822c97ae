/* SPDX-License-Identifier: MIT */
/*
 * DPDK telemetry v2 client. The socket is SOCK_SEQPACKET under the EAL
 * runtime directory (<run>/dpdk/<file-prefix>/dpdk_telemetry.v2, newer
 * DPDK adds ":N" for further processes); the server greets with
 * {"version", "pid", "max_output_len"} and answers each command with
 * {"<command>": value}.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rxray/attach.h"
#include "rxray/util.h"

#define TELE_BUF (1u << 20) /* answers are bounded by max_output_len */

struct rxb_tele {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char version[32];
	char prefix[64];
	char *buf;
};

static void runtime_base(char *out, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (geteuid() == 0)
		snprintf(out, len, "/var/run/dpdk");
	else
		snprintf(out, len, "%s/dpdk", xdg ? xdg : "/tmp");
}

/* Connect and read the greeting. 0 and the greeting's pid, or -errno. */
static int tele_connect(struct rxb_tele *tl, const char *path, int *pid_out)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	json_t *hello = NULL;
	ssize_t n;
	int fd, rc = 0;

	size_t plen = strlen(path);

	if (plen >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, plen + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		rc = -errno;
		goto out_close;
	}
	n = recv(fd, tl->buf, TELE_BUF - 1, 0);
	if (n <= 0) {
		rc = n < 0 ? -errno : -EPROTO;
		goto out_close;
	}
	tl->buf[n] = '\0';
	hello = json_loads(tl->buf, 0, NULL);
	if (!hello || !json_is_integer(json_object_get(hello, "pid"))) {
		rc = -EPROTO;
		goto out_close;
	}
	*pid_out = (int)json_integer_value(json_object_get(hello, "pid"));
	snprintf(tl->version, sizeof(tl->version), "%s",
		 json_string_value(json_object_get(hello, "version")) ?: "?");
	memcpy(tl->path, path, plen + 1); /* fits: checked against sun_path above */
	tl->fd = fd;
	json_decref(hello);
	return 0;
out_close:
	json_decref(hello);
	close(fd);
	return rc;
}

/* Try every dpdk_telemetry.v2* socket in dir; 0 when one greets as pid. */
static int tele_scan_dir(struct rxb_tele *tl, const char *dir, int pid, int *other_pid)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = -ENOENT;

	if (!d)
		return -ENOENT;
	while (rc && (de = readdir(d))) {
		int got = -1;
		if (strncmp(de->d_name, "dpdk_telemetry.v2", 17))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (tele_connect(tl, path, &got))
			continue;
		if (got == pid) {
			rc = 0;
		} else {
			*other_pid = got;
			close(tl->fd);
			tl->fd = -1;
		}
	}
	closedir(d);
	return rc;
}

int rxb_tele_open(int pid, const char *prefix, struct rxb_tele **out, char *err, size_t errlen)
{
	struct rxb_tele *tl = calloc(1, sizeof(*tl));
	char base[256], dir[512];
	int other = -1, rc = -ENOENT;

	*out = NULL;
	if (!tl || !(tl->buf = malloc(TELE_BUF))) {
		free(tl);
		snprintf(err, errlen, "telemetry: out of memory");
		return -ENOMEM;
	}
	tl->fd = -1;
	runtime_base(base, sizeof(base));
	if (prefix) {
		snprintf(dir, sizeof(dir), "%s/%s", base, prefix);
		rc = tele_scan_dir(tl, dir, pid, &other);
		if (rc && other >= 0) {
			snprintf(err, errlen, "--file-prefix %s: its telemetry socket in %s belongs to "
				 "pid %d, not %d", prefix, dir, other, pid);
			rc = -ESRCH;
		} else if (rc) {
			snprintf(err, errlen, "--file-prefix %s: no telemetry socket in %s (wrong "
				 "prefix, or the app runs with --no-telemetry)", prefix, dir);
		} else {
			snprintf(tl->prefix, sizeof(tl->prefix), "%s", prefix);
		}
	} else {
		struct dirent *de;
		DIR *d = opendir(base);
		while (d && rc && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(dir, sizeof(dir), "%s/%s", base, de->d_name);
			rc = tele_scan_dir(tl, dir, pid, &other);
			if (!rc)
				snprintf(tl->prefix, sizeof(tl->prefix), "%.63s", de->d_name);
		}
		if (d)
			closedir(d);
		if (rc)
			snprintf(err, errlen, "no telemetry socket under %s greets as pid %d (give "
				 "--file-prefix, or the app runs with --no-telemetry)", base, pid);
	}
	if (rc) {
		rxb_tele_close(tl);
		return rc;
	}
	*out = tl;
	return 0;
}

void rxb_tele_close(struct rxb_tele *tl)
{
	if (!tl)
		return;
	if (tl->fd >= 0)
		close(tl->fd);
	free(tl->buf);
	free(tl);
}

const char *rxb_tele_path(const struct rxb_tele *tl)
{
	return tl->path;
}

const char *rxb_tele_version(const struct rxb_tele *tl)
{
	return tl->version;
}

const char *rxb_tele_prefix(const struct rxb_tele *tl)
{
	return tl->prefix;
}

int rxb_tele_query(struct rxb_tele *tl, const char *cmd, json_t **out)
{
	char key[128];
	json_t *doc, *val;
	ssize_t n;
	int rc = 0;

	*out = NULL;
	/* a signal (the user's Ctrl-C) must not cost the window's last reading */
	do
		n = send(tl->fd, cmd, strlen(cmd), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -EIO;
	do
		n = recv(tl->fd, tl->buf, TELE_BUF - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -EIO;
	tl->buf[n] = '\0';
	doc = json_loads(tl->buf, 0, NULL);
	if (!doc)
		return -EPROTO;
	snprintf(key, sizeof(key), "%.*s", (int)strcspn(cmd, ","), cmd);
	val = json_object_get(doc, key);
	if (!val)
		rc = -EPROTO;
	else if (json_is_null(val) || (json_is_object(val) && !json_object_size(val)))
		rc = -ENOENT;
	else
		*out = json_incref(val);
	json_decref(doc);
	return rc;
}

static uint64_t ju64(const json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

static int tele_vquery(struct rxb_tele *tl, json_t **v, const char *fmt, va_list ap)
{
	char cmd[128];

	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	return rxb_tele_query(tl, cmd, v);
}

static int tele_queryf(struct rxb_tele *tl, json_t **v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* rxb_tele_query of a command built from fmt ("/ethdev/stats,%u") */
static int tele_queryf(struct rxb_tele *tl, json_t **v, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = tele_vquery(tl, v, fmt, ap);
	va_end(ap);
	return rc;
}

struct u64_field {
	const char *key;
	uint64_t *dst;
};

static int tele_read_u64(struct rxb_tele *tl, const struct u64_field *f, size_t n, const char *fmt,
			 ...) __attribute__((format(printf, 4, 5)));

/* The command's counters into their fields (0 where absent): 0, or the query's error. */
static int tele_read_u64(struct rxb_tele *tl, const struct u64_field *f, size_t n, const char *fmt,
			 ...)
{
	json_t *v;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = tele_vquery(tl, &v, fmt, ap);
	va_end(ap);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		*f[i].dst = ju64(v, f[i].key);
	json_decref(v);
	return 0;
}

static int port_read(struct rxb_tele *tl, uint16_t id, struct rxb_tele_port *p)
{
	const struct u64_field stats[] = {
	    {"ipackets", &p->ipackets},
	    {"imissed", &p->imissed},
	    {"ierrors", &p->ierrors},
	    {"rx_nombuf", &p->rx_nombuf},
	};
	const struct u64_field missed[] = {{"rx_missed_errors", &p->imissed}};
	json_t *v;
	int rc;

	memset(p, 0, sizeof(*p));
	p->id = id;
	rc = tele_read_u64(tl, stats, sizeof(stats) / sizeof(stats[0]), "/ethdev/stats,%u", id);
	if (rc)
		return rc;
	if (!p->imissed) /* some PMDs report missed packets only as an xstat */
		tele_read_u64(tl, missed, 1, "/ethdev/xstats,%u", id);
	if (!tele_queryf(tl, &v, "/ethdev/info,%u", id)) {
		snprintf(p->name, sizeof(p->name), "%s",
			 json_string_value(json_object_get(v, "name")) ?: "");
		p->nb_rx_queues = (uint32_t)ju64(v, "nb_rx_queues");
		p->rx_mbuf_size_min = ju64(v, "rx_mbuf_size_min");
		json_decref(v);
	}
	return 0;
}

static int pool_read(struct rxb_tele *tl, const char *name, struct rxb_tele_pool *mp)
{
	const struct u64_field info[] = {
	    {"size", &mp->size},
	    {"cache_size", &mp->cache_size},
	    {"elt_size", &mp->elt_size},
	    {"header_size", &mp->header_size},
	    {"private_data_size", &mp->private_data_size},
	    {"populated_size", &mp->populated_size},
	};

	memset(mp, 0, sizeof(*mp));
	snprintf(mp->name, sizeof(mp->name), "%s", name);
	return tele_read_u64(tl, info, sizeof(info) / sizeof(info[0]), "/mempool/info,%s", name);
}

const struct rxb_tele_port *rxb_tele_port_find(const struct rxb_tele_snap *s, uint16_t id)
{
	for (size_t i = 0; s && i < s->nports; i++)
		if (s->ports[i].id == id)
			return &s->ports[i];
	return NULL;
}

int rxb_tele_snapshot(struct rxb_tele *tl, struct rxb_tele_snap *s)
{
	json_t *list = NULL, *v;
	size_t i;
	int rc;

	memset(s, 0, sizeof(*s));
	s->t = rxu_mono_seconds();
	rc = rxb_tele_query(tl, "/ethdev/list", &list);
	if (rc && rc != -ENOENT)
		return rc;
	json_array_foreach(list, i, v) {
		if (s->nports == RXB_ATTACH_MAX_PORTS || !json_is_integer(v))
			break;
		if (!port_read(tl, (uint16_t)json_integer_value(v), &s->ports[s->nports]))
			s->nports++;
	}
	json_decref(list);
	list = NULL;
	rc = rxb_tele_query(tl, "/mempool/list", &list);
	if (rc && rc != -ENOENT)
		return rc;
	json_array_foreach(list, i, v) {
		if (s->npools == RXB_ATTACH_MAX_POOLS || !json_is_string(v))
			break;
		if (!pool_read(tl, json_string_value(v), &s->pools[s->npools]))
			s->npools++;
	}
	json_decref(list);
	/* time the middle of the reads, not their start */
	s->t = (s->t + rxu_mono_seconds()) / 2;
	return 0;
}
