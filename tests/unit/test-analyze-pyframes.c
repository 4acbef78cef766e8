/*
 * test-analyze-pyframes.c - line table decoding (analyze/trace/pyframes.c) on
 * real tables: a known snippet compiled by CPython 3.9 to 3.13, every code
 * object's raw table and the line of each instruction as that interpreter
 * reports it (tests/unit/pyframes-data.h, from gen-pyframes-data.sh). Also
 * the frame encoding and which files are the user's own code.
 */
#include "testhelp.h"
#include "trace/pyframes.h"

struct code_case {
	unsigned version;
	int first_line;
	const char *name;
	const unsigned char *table;
	size_t len;
	const int (*lines)[2];
	size_t nlines;
};

#include "pyframes-data.h"

static const struct code_case cases[] = { PY_ALL_CODES };

int main(void)
{
	TEST("every instruction of every version's code objects") {
		unsigned versions = 0;

		for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
			const struct code_case *k = &cases[c];
			size_t bad = 0;

			versions |= 1u << (k->version & 0xff);
			for (size_t i = 0; i < k->nlines; i++) {
				int line = -7, rc = py_line_at(k->version, k->first_line, k->table, k->len,
							       (uint32_t)k->lines[i][0], &line);
				if (rc != 0 || line != k->lines[i][1]) {
					if (!bad++)
						fprintf(stderr, "%x %s offset %d: rc %d line %d, expected %d\n",
							k->version, k->name, k->lines[i][0], rc, line,
							k->lines[i][1]);
				}
			}
			CHECK_EQ_U64(bad, 0);
		}
		CHECK_EQ_U64(versions, 1u << 9 | 1u << 10 | 1u << 11 | 1u << 12 | 1u << 13);
	}

	TEST("beyond the table, unknown versions, empty tables") {
		int line;
		const unsigned char t311[] = { 0xe8, 0x02 };  /* 1 unit, no columns, +1 line */

		CHECK_EQ_U64(py_line_at(0x030b, 10, t311, sizeof t311, 0, &line), 0);
		CHECK_EQ_U64(line, 11);
		CHECK_EQ_U64(py_line_at(0x030b, 10, t311, sizeof t311, 1, &line), (uint64_t)-1);
		CHECK_EQ_U64(line, 10);
		CHECK_EQ_U64(py_line_at(0x030e, 10, t311, sizeof t311, 0, &line), (uint64_t)-1);
		CHECK_EQ_U64(line, 10);
		CHECK_EQ_U64(py_line_at(0x030a, 5, NULL, 0, 0, &line), (uint64_t)-1);
		CHECK_EQ_U64(py_line_at(0x0309, 5, NULL, 0, 3, &line), 0);
		CHECK_EQ_U64(line, 5);
		/* a cut varint and a continuation byte first: no read past the end */
		const unsigned char cut[] = { 0xe8, 0x42 };  /* varint continues past the end */
		CHECK_EQ_U64(py_line_at(0x030c, 1, cut, sizeof cut, 0, &line), (uint64_t)-1);
		const unsigned char junk[] = { 0x01, 0x02 };
		CHECK_EQ_U64(py_line_at(0x030d, 1, junk, sizeof junk, 0, &line), (uint64_t)-1);
	}

	TEST("frame encoding") {
		uint64_t ip = MT_PYFRAME_TAG | (uint64_t)12345 << 24 | 678;

		CHECK(py_is_frame(ip));
		CHECK(!py_is_frame(0x7f0012345678ull));
		CHECK_EQ_U64(MT_PYFRAME_CODE(ip), 12345);
		CHECK_EQ_U64(MT_PYFRAME_OFFSET(ip), 678);
	}

	TEST("the user's own files") {
		static const struct { const char *file; int user; } f[] = {
			{ "/home/me/train.py", 1 },
			{ "train.py", 1 },
			{ "/home/me/python3/model.py", 1 },
			{ "/usr/lib/python3.11/asyncio/events.py", 0 },
			{ "/root/.pyenv/versions/3.12.1/lib/python3.12/threading.py", 0 },
			{ "/usr/lib64/python3.9/runpy.py", 0 },
			{ "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", 0 },
			{ "/usr/lib/python3/dist-packages/numpy/core.py", 0 },
			{ "<frozen importlib._bootstrap>", 0 },
			{ "<string>", 0 },
			{ "", 0 },
		};
		for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
			int got = py_file_is_user(f[i].file, strlen(f[i].file));
			if (got != f[i].user)
				fprintf(stderr, "py_file_is_user(\"%s\") = %d\n", f[i].file, got);
			CHECK_EQ_U64(got, f[i].user);
		}
	}
	return test_report(__FILE__);
}
