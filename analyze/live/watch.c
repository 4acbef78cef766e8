/*
 * watch.c - the watching loop (watch.h): follow, take frames, serve them.
 *
 * One thread, one poll(2) loop: the listening socket, the connections
 * being answered, the terminal's keys and the stop descriptor, with the
 * next poll of the traces as its timeout (every 200 ms, or the interval
 * when shorter; a frame each interval). A request gets the frame taken
 * last, so a scrape never waits for the traces. Only GET /metrics is
 * served; anything else gets 404, a request not complete within a second
 * or larger than 8 KiB is dropped. The textfile is written to a temporary
 * name in its folder and renamed, so node_exporter never reads half of it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "live/figures.h"
#include "live/screen.h"
#include "live/watch.h"

#define MAX_CONN 16
#define REQ_MAX 8192
#define POLL_MS 200

struct conn {
	int fd;
	size_t n;
	int64_t since;
	char req[REQ_MAX];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int watch_parse_addr(const char *s, char *addr, size_t addrlen, int *port, char *err,
		     size_t errlen)
{
	const char *colon = strrchr(s, ':');
	const char *p = colon ? colon + 1 : s;
	struct in_addr ia;
	char *end;
	long v;

	snprintf(addr, addrlen, "127.0.0.1");
	if (colon) {
		if ((size_t)(colon - s) >= addrlen || colon == s) {
			snprintf(err, errlen, "bad address '%s' (ADDR:PORT or PORT expected)", s);
			return -1;
		}
		memcpy(addr, s, (size_t)(colon - s));
		addr[colon - s] = 0;
		if (inet_pton(AF_INET, addr, &ia) != 1) {
			snprintf(err, errlen, "bad address '%s' (an IPv4 address expected)", addr);
			return -1;
		}
	}
	errno = 0;
	v = strtol(p, &end, 10);
	if (!*p || *end || errno || v < 0 || v > 65535) {
		snprintf(err, errlen, "bad port '%s' (0 to 65535 expected)", p);
		return -1;
	}
	*port = (int)v;
	return 0;
}

static int listen_on(const char *spec, int *port_out, char *err, size_t errlen)
{
	char addr[64];
	int port, fd, one = 1;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);

	if (watch_parse_addr(spec, addr, sizeof(addr), &port, err, errlen))
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, addr, &sa.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		snprintf(err, errlen, "cannot listen on %s:%d: %s", addr, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port_out = ntohs(sa.sin_port);
	return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
	int64_t until = now_ms() + 1000;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else if (w < 0 && (errno == EAGAIN || errno == EINTR) && now_ms() < until) {
			struct pollfd pf = { fd, POLLOUT, 0 };

			poll(&pf, 1, 100);
		} else {
			return;
		}
	}
}

/* Answers a complete request; 1 when it was answered, 0 to wait for more. */
static int answer(struct conn *c, const char *body, size_t blen)
{
	char hdr[256];
	int n;

	if (!memmem(c->req, c->n, "\r\n\r\n", 4) && !memmem(c->req, c->n, "\n\n", 2))
		return 0;
	if (!strncmp(c->req, "GET /metrics ", 13) || !strncmp(c->req, "GET /metrics?", 13)) {
		n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 200 OK\r\nContent-Type: text/plain; "
			     "version=0.0.4; charset=utf-8\r\nContent-Length: %zu\r\n"
			     "Connection: close\r\n\r\n", blen);
		send_all(c->fd, hdr, (size_t)n);
		send_all(c->fd, body, blen);
	} else {
		static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
					 "Content-Length: 20\r\nConnection: close\r\n\r\n"
					 "only /metrics here\r\n";
		send_all(c->fd, nf, sizeof(nf) - 1);
	}
	return 1;
}

static int write_textfile(const char *dir, const char *body, size_t n)
{
	char tmp[4096], path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/memtrace.prom", dir);
	snprintf(tmp, sizeof(tmp), "%s/.memtrace.prom.%d", dir, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (write(fd, body, n) != (ssize_t)n || close(fd) || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

struct state {
	const struct watch_opts *o;
	struct follow *f;
	struct lv *v;
	struct screen *sc;
	char *body;                 /* the exposition of the last frame */
	size_t blen;
	enum lv_sort sort;
	int proc, dev, paused, quit;
};

static int frame(struct state *st, char *err, size_t errlen)
{
	FILE *m;
	char *buf = NULL;
	size_t n = 0;

	if (lv_update(st->v, st->f, st->sort, st->proc, st->dev)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (st->o->metrics_addr || st->o->textfile_dir) {
		m = open_memstream(&buf, &n);
		if (!m) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		lv_metrics(m, st->v, st->o->top_sites > 0 ? st->o->top_sites : 10);
		if (fclose(m)) {
			free(buf);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		free(st->body);
		st->body = buf;
		st->blen = n;
		if (st->o->textfile_dir && write_textfile(st->o->textfile_dir, buf, n)) {
			snprintf(err, errlen, "cannot write '%s/memtrace.prom': %s",
				 st->o->textfile_dir, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void on_key(struct state *st, int key)
{
	struct analysis *a = follow_analysis(st->f);

	switch (key) {
	case 'q': case 'Q':
		st->quit = 1;
		break;
	case 's':       /* sort: bytes, count, growth */
		st->sort = st->sort == LV_SORT_BYTES ? LV_SORT_COUNT :
			   st->sort == LV_SORT_COUNT ? LV_SORT_GROWTH : LV_SORT_BYTES;
		break;
	case 'p':       /* the next process, then all */
		st->proc = a && st->proc + 1 < a->nprocs ? st->proc + 1 : -1;
		break;
	case 'd': {     /* the next device in use, then all */
		int next = -1;

		for (int i = 0; a && i < a->ndevs; i++)
			if (a->devs[i].proc < 0 && a->devs[i].dev > st->dev &&
			    (next < 0 || a->devs[i].dev < next))
				next = a->devs[i].dev;
		st->dev = next;
		break;
	}
	case 'm':
		lv_mark(st->v, st->f);
		break;
	case ' ':
		st->paused = !st->paused;
		break;
	default:
		break;
	}
}

int watch_run(const struct watch_opts *o, char *err, size_t errlen)
{
	struct state st = { o, NULL, NULL, NULL, NULL, 0, LV_SORT_BYTES, -1, -1, 0, 0 };
	struct conn *conns[MAX_CONN] = { 0 };
	int lfd = -1, rc = -1, stopped = 0, port = 0;
	int interval = o->interval_ms > 0 ? o->interval_ms : 1000;
	int64_t next_frame = 0, next_poll = 0;

	signal(SIGPIPE, SIG_IGN);
	st.f = follow_open(o->trace, o->dir, &o->sym, err, errlen);
	st.v = lv_new();
	if (!st.f || !st.v)
		goto out;
	follow_set_run_id(st.f, o->run_id);
	if (o->once) {
		/* everything written so far, twice: the second read finds the
		   processes that are gone done */
		if (follow_poll(st.f, 1, err, errlen) < 0 || follow_poll(st.f, 1, err, errlen) < 0 ||
		    frame(&st, err, errlen))
			goto out;
		if (o->json)
			lv_json(stdout, st.v);
		else
			lv_text(stdout, st.v, o->bytes, o->max_sites);
		rc = fflush(stdout) ? -1 : 0;
		if (rc)
			snprintf(err, errlen, "cannot write the frame: %s", strerror(errno));
		goto out;
	}
	if (o->metrics_addr && (lfd = listen_on(o->metrics_addr, &port, err, errlen)) < 0)
		goto out;
	if (o->ready_fd >= 0) {
		char line[64];
		int n = snprintf(line, sizeof(line), "%d\n", port);

		(void)!write(o->ready_fd, line, (size_t)n);
		close(o->ready_fd);
	}
	if (o->screen && !(st.sc = screen_open()))
		st.sc = NULL;       /* no usable terminal: text frames */
	while (!st.quit) {
		struct pollfd pf[MAX_CONN + 3];
		int np = 0, t = -1, kfd = -1, over;
		int64_t now = now_ms(), wait;

		if (now >= next_poll) {
			/* at the end twice: the second read finds the processes
			   that are gone done */
			if (!st.paused && (follow_poll(st.f, stopped, err, errlen) < 0 ||
					   (stopped && follow_poll(st.f, 1, err, errlen) < 0)))
				goto out;
			next_poll = now + (interval < POLL_MS ? interval : POLL_MS);
		}
		/* the job over: a last frame of everything, then the end */
		over = stopped || (o->stop_fd < 0 && !st.sc && follow_done(st.f));
		if (now >= next_frame || over) {
			if (!st.paused && frame(&st, err, errlen))
				goto out;
			if (st.sc)
				screen_draw(st.sc, st.v, st.sort, st.proc, st.dev, st.paused);
			else if (o->screen) {
				lv_text(stdout, st.v, o->bytes, o->max_sites);
				fputc('\n', stdout);
				fflush(stdout);
			}
			next_frame = now + interval;
		}
		/* without a view to quit (no terminal), the end of the job ends it */
		if (over)
			break;
		if (lfd >= 0) {
			pf[np].fd = lfd;
			pf[np++].events = POLLIN;
		}
		for (int i = 0; i < MAX_CONN; i++)
			if (conns[i]) {
				pf[np].fd = conns[i]->fd;
				pf[np++].events = POLLIN;
			}
		if (o->stop_fd >= 0) {
			t = np;
			pf[np].fd = o->stop_fd;
			pf[np++].events = POLLIN;
		}
		if (st.sc) {
			kfd = np;
			pf[np].fd = 0;
			pf[np++].events = POLLIN;
		}
		wait = (next_poll < next_frame ? next_poll : next_frame) - now_ms();
		if (poll(pf, (nfds_t)np, wait > 0 ? (int)wait : 0) < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			goto out;
		}
		if (t >= 0 && o->stop_fd >= 0 && pf[t].revents) {
			/* the job is over: read what is left, then a last frame */
			stopped = 1;
			next_poll = next_frame = 0;
		}
		if (kfd >= 0 && pf[kfd].revents) {
			int key;

			while ((key = screen_key(st.sc)) >= 0)
				on_key(&st, key);
			if (!st.paused)
				(void)lv_update(st.v, st.f, st.sort, st.proc, st.dev);
			screen_draw(st.sc, st.v, st.sort, st.proc, st.dev, st.paused);
		}
		if (lfd >= 0 && (pf[0].revents & POLLIN)) {
			int cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

			for (int i = 0; cfd >= 0 && i < MAX_CONN; i++)
				if (!conns[i] && (conns[i] = calloc(1, sizeof(struct conn)))) {
					conns[i]->fd = cfd;
					conns[i]->since = now_ms();
					cfd = -1;
				}
			if (cfd >= 0)
				close(cfd);     /* too many at once */
		}
		for (int i = 0; i < MAX_CONN; i++) {
			struct conn *c = conns[i];
			ssize_t r;

			if (!c)
				continue;
			r = recv(c->fd, c->req + c->n, sizeof(c->req) - 1 - c->n, 0);
			if (r > 0)
				c->n += (size_t)r;
			if ((r > 0 && answer(c, st.body ? st.body : "", st.blen)) || r == 0 ||
			    (r < 0 && errno != EAGAIN && errno != EINTR) ||
			    c->n >= sizeof(c->req) - 1 || now_ms() - c->since > 1000) {
				close(c->fd);
				free(c);
				conns[i] = NULL;
			}
		}
	}
	rc = 0;
out:
	if (st.sc)
		screen_close(st.sc);
	for (int i = 0; i < MAX_CONN; i++)
		if (conns[i]) {
			close(conns[i]->fd);
			free(conns[i]);
		}
	if (lfd >= 0)
		close(lfd);
	free(st.body);
	lv_free(st.v);
	follow_close(st.f);
	return rc;
}
