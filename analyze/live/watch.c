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
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "live/figures.h"
#include "live/screen.h"
#include "live/watch.h"

#define MAX_CONN 64
#define REQ_MAX 8192
#define POLL_MS 200
#define REQ_MS 1000                 /* to send a whole request */
#define SEND_MS 5000                /* to take a whole answer */

/* A connection: reading its request, then sending its answer (out). */
struct conn {
	int fd;
	size_t n;
	int64_t since;              /* accepted, then answered */
	char *out;                  /* the answer, NULL while reading */
	size_t olen, opos;
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
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 256) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		snprintf(err, errlen, "cannot listen on %s:%d: %s", addr, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port_out = ntohs(sa.sin_port);
	return fd;
}

/*
 * Makes the answer to a complete request (c->out, sent by the loop as the
 * client takes it: a client that does not read holds only its own
 * connection); 1 when there is one, 0 to wait for more, -1 on memory
 * failure (the connection is dropped).
 */
static int answer(struct conn *c, const char *body, size_t blen)
{
	static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
				 "Content-Length: 20\r\nConnection: close\r\n\r\n"
				 "only /metrics here\r\n";
	char hdr[256];
	int n;

	if (!memmem(c->req, c->n, "\r\n\r\n", 4) && !memmem(c->req, c->n, "\n\n", 2))
		return 0;
	if (!strncmp(c->req, "GET /metrics ", 13) || !strncmp(c->req, "GET /metrics?", 13)) {
		n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 200 OK\r\nContent-Type: text/plain; "
			     "version=0.0.4; charset=utf-8\r\nContent-Length: %zu\r\n"
			     "Connection: close\r\n\r\n", blen);
	} else {
		n = (int)sizeof(nf) - 1;
		memcpy(hdr, nf, sizeof(nf));
		blen = 0;
	}
	if (!(c->out = malloc((size_t)n + blen + 1)))
		return -1;
	memcpy(c->out, hdr, (size_t)n);
	if (blen)
		memcpy(c->out + n, body, blen);
	c->olen = (size_t)n + blen;
	c->opos = 0;
	c->since = now_ms();
	return 1;
}

/* Sends what c's answer has left; 1 when all of it went, 0 for later, -1
   when the client is gone. */
static int send_more(struct conn *c)
{
	while (c->opos < c->olen) {
		ssize_t w = send(c->fd, c->out + c->opos, c->olen - c->opos, MSG_NOSIGNAL);

		if (w > 0)
			c->opos += (size_t)w;
		else if (w < 0 && errno == EINTR)
			continue;
		else
			return w < 0 && errno == EAGAIN ? 0 : -1;
	}
	return 1;
}

static void conn_close(struct conn **cp)
{
	close((*cp)->fd);
	free((*cp)->out);
	free(*cp);
	*cp = NULL;
}

/*
 * Takes the new connections. With every place taken, the one that has
 * waited longest for its request makes room (it had its second, or has
 * sent nothing): idle clients never shut a scrape out.
 */
static void take_conns(int lfd, struct conn **conns)
{
	for (int k = 0; k < 4 * MAX_CONN; k++) {
		int cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), i, old = -1;

		if (cfd < 0)
			return;
		for (i = 0; i < MAX_CONN && conns[i]; i++)
			if (!conns[i]->out && (old < 0 || conns[i]->since < conns[old]->since))
				old = i;
		if (i == MAX_CONN) {
			for (i = 0; old < 0 && i < MAX_CONN; i++)
				if (old < 0 || conns[i]->since < conns[old]->since)
					old = i;
			i = old >= 0 ? old : 0;
			conn_close(&conns[i]);
		}
		if (!(conns[i] = calloc(1, sizeof(struct conn)))) {
			close(cfd);
			continue;
		}
		conns[i]->fd = cfd;
		conns[i]->since = now_ms();
	}
}

/* Reads, answers and sends on every connection; drops those done, gone,
   too large, or out of time. */
static void serve_conns(struct conn **conns, const char *body, size_t blen)
{
	for (int i = 0; i < MAX_CONN; i++) {
		struct conn *c = conns[i];
		int64_t now = now_ms();
		int drop = 0;

		if (!c)
			continue;
		if (!c->out) {
			ssize_t r = recv(c->fd, c->req + c->n, sizeof(c->req) - 1 - c->n, 0);
			int a = 0;

			if (r > 0) {
				c->n += (size_t)r;
				a = answer(c, body, blen);
			}
			drop = a < 0 || r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR) ||
			       (!a && (c->n >= sizeof(c->req) - 1 || now - c->since > REQ_MS));
		}
		if (!drop && c->out) {
			int s = send_more(c);

			drop = s != 0 || now - c->since > SEND_MS;
		}
		if (drop)
			conn_close(&conns[i]);
	}
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
	/* warnings about the traces (follow_warning), each said once: on
	   stderr, or with a screen the last on it and all on stderr once it
	   is closed */
	char warn[8][600];
	int nwarn, more_warn;
};

/* Says the warnings the last poll found. */
static void say_warnings(struct state *st)
{
	char w[600];

	while (follow_warning(st->f, w, sizeof(w)) == 0) {
		if (!st->sc) {
			fprintf(stderr, "memtrace: warning: %s\n", w);
			continue;
		}
		if (st->nwarn < 8)
			memcpy(st->warn[st->nwarn++], w, sizeof(w));
		else
			st->more_warn++;
	}
}

/* The warnings kept while the screen was up, once it is closed. */
static void say_kept_warnings(struct state *st)
{
	for (int i = 0; i < st->nwarn; i++)
		fprintf(stderr, "memtrace: warning: %s\n", st->warn[i]);
	if (st->more_warn)
		fprintf(stderr, "memtrace: warning: and %d more\n", st->more_warn);
	st->nwarn = st->more_warn = 0;
}

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

/*
 * The job is over: its last frame stays on /metrics (and in the textfile,
 * which is left as it is) for o->linger_ms, so that a scrape after the end
 * still sees it. The watcher of `memtrace run` (stop_fd) does it in a
 * process of its own, so the launcher does not wait for it.
 */
static void linger(struct state *st, const struct watch_opts *o, int lfd, struct conn **conns)
{
	int64_t until;

	if (lfd < 0)
		return;         /* the textfile keeps the last frame by itself */
	if (o->stop_fd >= 0) {
		pid_t pid;
		int nul;

		fflush(NULL);
		if ((pid = fork()) != 0)
			return;     /* (or it failed: no lingering) */
		setsid();
		nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
			close(nul);
		}
		close(o->stop_fd);
	} else {
		fprintf(stderr, "memtrace: the job is over; its last figures stay on /metrics for "
			"%.3g s (--metrics-linger)\n", o->linger_ms / 1000.0);
	}
	until = now_ms() + o->linger_ms;
	for (int64_t now; (now = now_ms()) < until;) {
		struct pollfd pf[MAX_CONN + 1];
		int np = 0;
		int64_t wait = until - now;

		pf[np].fd = lfd;
		pf[np++].events = POLLIN;
		for (int i = 0; i < MAX_CONN; i++)
			if (conns[i]) {
				pf[np].fd = conns[i]->fd;
				pf[np++].events = conns[i]->out ? POLLOUT : POLLIN;
			}
		if (np > 1 && wait > POLL_MS)
			wait = POLL_MS;
		if (poll(pf, (nfds_t)np, (int)wait) < 0 && errno != EINTR)
			break;
		if (pf[0].revents & POLLIN)
			take_conns(lfd, conns);
		serve_conns(conns, st->body ? st->body : "", st->blen);
	}
	if (o->stop_fd >= 0)
		_exit(0);
}

/* Says once that traces could not be followed (follow_missed). */
static void say_missed(int n, int *said)
{
	struct rlimit rl;

	if (n <= 0 || *said)
		return;
	*said = 1;
	getrlimit(RLIMIT_NOFILE, &rl);
	fprintf(stderr, "memtrace: warning: %d trace%s of the run could not be followed: no file "
		"descriptor left (open files limit %llu); their processes are not in the figures\n",
		n, n == 1 ? "" : "s", (unsigned long long)rl.rlim_cur);
}

int watch_run(const struct watch_opts *o, char *err, size_t errlen)
{
	int missed_said = 0, missed_max = 0;
	struct state st = { .o = o, .sort = LV_SORT_BYTES, .proc = -1, .dev = -1 };
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
		say_warnings(&st);
		if (o->json)
			lv_json(stdout, st.v);
		else
			lv_text(stdout, st.v, o->bytes, o->max_sites);
		rc = fflush(stdout) ? -1 : 0;
		say_missed(follow_missed(st.f), &missed_said);
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
			say_warnings(&st);
			if (follow_missed(st.f) > missed_max)
				missed_max = follow_missed(st.f);
			if (!st.sc)
				say_missed(missed_max, &missed_said);
		}
		/* the job over: a last frame of everything, then the end */
		over = stopped || (o->stop_fd < 0 && !st.sc && follow_done(st.f));
		if (now >= next_frame || over) {
			if (!st.paused && frame(&st, err, errlen))
				goto out;
			if (st.sc)
				screen_draw(st.sc, st.v, st.sort, st.proc, st.dev, st.paused,
					    st.nwarn ? st.warn[st.nwarn - 1] : NULL);
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
				pf[np++].events = conns[i]->out ? POLLOUT : POLLIN;
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
			screen_draw(st.sc, st.v, st.sort, st.proc, st.dev, st.paused,
				    st.nwarn ? st.warn[st.nwarn - 1] : NULL);
		}
		if (lfd >= 0 && (pf[0].revents & POLLIN))
			take_conns(lfd, conns);
		serve_conns(conns, st.body ? st.body : "", st.blen);
	}
	if (st.sc) {
		screen_close(st.sc);
		st.sc = NULL;
	}
	say_kept_warnings(&st);
	say_missed(missed_max, &missed_said);
	if (st.quit && !follow_done(st.f)) {
		if (st.sc)
			screen_close(st.sc);
		st.sc = NULL;
		fprintf(stderr, "memtrace: the view is closed; the job keeps running%s\n",
			o->stop_fd >= 0 ? " (memtrace run waits for it)" : "");
	} else if (!st.quit && o->linger_ms > 0 && (lfd >= 0 || o->textfile_dir)) {
		linger(&st, o, lfd, conns);
	}
	rc = 0;
out:
	if (st.sc)
		screen_close(st.sc);
	say_kept_warnings(&st);
	for (int i = 0; i < MAX_CONN; i++)
		if (conns[i])
			conn_close(&conns[i]);
	if (lfd >= 0)
		close(lfd);
	free(st.body);
	lv_free(st.v);
	follow_close(st.f);
	return rc;
}
