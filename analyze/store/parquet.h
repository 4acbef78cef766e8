/*
 * parquet.h - a small writer of Apache Parquet files (apache/parquet-format:
 * README.md, LogicalTypes.md, Encodings.md, src/main/thrift/parquet.thrift),
 * for `memtrace export --format parquet` (views/export-parquet.c). Debian 12
 * has no Parquet library for C, so this writes the format from its spec;
 * what it writes is checked by DuckDB and hyparquet, independent readers
 * (tests/t900-parquet-*.sh).
 *
 * What it covers:
 *   - flat schemas of required or optional columns of these types:
 *     BOOLEAN; INT32 with INTEGER(8|16|32, signed); INT64 with
 *     INTEGER(64, signed); INT64 with TIMESTAMP(NANOS, isAdjustedToUTC =
 *     true); BYTE_ARRAY with STRING (converted type UTF8); and one nested
 *     shape, a required LIST of required STRING elements (the 3-level
 *     structure of LogicalTypes.md: `required group NAME (LIST) { repeated
 *     group list { required binary element (STRING); } }`)
 *   - data pages v1: definition levels (optional columns, lists) and
 *     repetition levels (lists) in the RLE/bit-packed hybrid with its
 *     4-byte length; values PLAIN, except STRING columns, which are
 *     RLE_DICTIONARY with one PLAIN dictionary page per column chunk
 *   - ZSTD compression of every page (libzstd), the page headers and the
 *     footer (FileMetaData) in the Thrift compact protocol
 *   - row groups of at most pq_opts.rowgroup_rows rows (1 M by default);
 *     column chunk statistics: null_count, and min_value/max_value for
 *     integer, timestamp and boolean columns (with column_orders
 *     TYPE_ORDER); key/value metadata in the footer
 *   - bounded memory: a column's finished pages are kept in memory, or, when
 *     a spill file is given (pq_spill), appended to it and copied into the
 *     file when the row group ends, so many writers open at once each hold
 *     one page of values, the dictionaries, and a few bytes per page
 *
 * What it does not: reading; maps, structs, lists of anything but
 * strings, nested lists; FLOAT, DOUBLE, INT96, FIXED_LEN_BYTE_ARRAY,
 * DECIMAL and the other logical types; other encodings (DELTA_*,
 * BYTE_STREAM_SPLIT) and data pages v2; codecs other than ZSTD; page
 * statistics, page indexes (ColumnIndex/OffsetIndex), bloom filters, CRCs,
 * encryption; statistics of STRING columns; dictionary fallback (a
 * dictionary grows with the distinct strings of a row group).
 *
 * Functions return 0 / NULL-or--1 with a message in err; they never print.
 */
#ifndef MEMTRACE_PARQUET_H
#define MEMTRACE_PARQUET_H

#include <stddef.h>
#include <stdint.h>

enum pq_type {
	PQ_BOOL,
	PQ_INT8,                    /* INT32 annotated INTEGER(8, true) */
	PQ_INT16,                   /* INT32, INTEGER(16, true) */
	PQ_INT32,                   /* INT32, INTEGER(32, true) */
	PQ_INT64,                   /* INT64, INTEGER(64, true) */
	PQ_TIMESTAMP_NS,            /* INT64, TIMESTAMP(NANOS, UTC) */
	PQ_STRING,                  /* BYTE_ARRAY, STRING, dictionary encoded */
	PQ_STRING_LIST,             /* required LIST of required STRING */
};

struct pq_col {
	const char *name;
	enum pq_type type;
	int optional;               /* may be null (not for PQ_STRING_LIST) */
};

/* A file that many writers append their finished pages to (see above). */
struct pq_spill;
struct pq_spill *pq_spill_open(const char *path, char *err, size_t errlen);
/* Closes and removes the file. */
void pq_spill_close(struct pq_spill *s);

struct pq_opts {
	uint32_t page_rows;         /* values per data page (0: 65536) */
	uint32_t rowgroup_rows;     /* rows per row group (0: 1048576) */
	int zstd_level;             /* 0: 3 */
	struct pq_spill *spill;     /* NULL: pages stay in memory */
	const char *created_by;     /* footer's created_by, or NULL */
};

struct pq_writer;

/*
 * A writer of the file path (created, or truncated, when the first row
 * group is written: a writer that has written nothing holds no file
 * descriptor). cols is copied.
 */
struct pq_writer *pq_open(const char *path, const struct pq_col *cols, int ncols,
			  const struct pq_opts *o, char *err, size_t errlen);

/* Values of the current row, any column order; a column not set is null
   (an error at pq_end_row for a required one; an empty list for a list). */
void pq_null(struct pq_writer *w, int col);
void pq_i64(struct pq_writer *w, int col, int64_t v);   /* every integer type */
void pq_bool(struct pq_writer *w, int col, int v);
void pq_str(struct pq_writer *w, int col, const char *p, size_t len);
/* Appends one element to the list of col in the current row. */
void pq_list_add(struct pq_writer *w, int col, const char *p, size_t len);
/* Ends the row; may write a row group. */
int pq_end_row(struct pq_writer *w);

/* A key/value pair of the footer's metadata (copied). */
int pq_meta(struct pq_writer *w, const char *key, const char *value);

uint64_t pq_rows(const struct pq_writer *w);

/* Writes the last row group and the footer, closes, frees w; -1 with the
   writer's first error in err. */
int pq_close(struct pq_writer *w, char *err, size_t errlen);
/* The message of the first failure of w (valid until pq_close/pq_abort). */
const char *pq_error(const struct pq_writer *w);
/* Frees w without finishing the file (the caller removes it). */
void pq_abort(struct pq_writer *w);

#endif
