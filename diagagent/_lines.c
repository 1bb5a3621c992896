/* diagagent._lines: the log scan's per-byte passes in compiled code: a block's newlines, every line's shape (digits
 * 1-9 made 0) numbered by first occurrence, and progress numbers read by column. Built at install (hatch_build.py).
 *
 * Python's fallbacks, which these must match exactly (tests/test_lines_native.py compares them):
 *   newlines(body)  == np.flatnonzero(np.frombuffer(body, np.uint8) == 10)          (as int64 bytes)
 *   shapes(...)     == pyarrow's dictionary_encode of each line translated by SHAPE_TABLE (logblocks.BlockShapes)
 *   decimals(...)   == the digits gathered by np.take times a matrix of powers of ten (logblocks.ShapeColumns)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* --- newlines ------------------------------------------------------------------------------------------------- */

static PyObject *newlines(PyObject *self, PyObject *arg) {
    Py_buffer body;
    if (PyObject_GetBuffer(arg, &body, PyBUF_SIMPLE) < 0) return NULL;
    const char *start = body.buf, *end = start + body.len, *p;
    /* one pass, into room for a line every 64 bytes, doubled when short (log lines run longer) */
    Py_ssize_t count = 0, room = body.len / 64 + 16;
    PyObject *out = PyBytes_FromStringAndSize(NULL, room * (Py_ssize_t)sizeof(int64_t));
    for (p = start; out != NULL && p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) {
        if (count == room) {
            room *= 2;
            if (_PyBytes_Resize(&out, room * (Py_ssize_t)sizeof(int64_t)) < 0) break; /* (out is NULL then) */
        }
        ((int64_t *)PyBytes_AS_STRING(out))[count++] = p - start;
    }
    if (out != NULL) _PyBytes_Resize(&out, count * (Py_ssize_t)sizeof(int64_t));
    PyBuffer_Release(&body);
    return out;
}

/* --- shapes --------------------------------------------------------------------------------------------------- */

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* A line's hash, 16 bytes at a time in two lanes (two multiplies that do not wait for each other). Equal shapes hash
 * equal; unequal ones are told apart by comparing their bytes, so the hash only spreads the table. */
static inline uint64_t hash_bytes(const unsigned char *s, size_t n) {
    const uint64_t k = 0x9E3779B97F4A7C15ULL;
    uint64_t a = n * k, b = ~(uint64_t)n, w, v;
    for (; n >= 16; s += 16, n -= 16) {
        memcpy(&w, s, 8);
        memcpy(&v, s + 8, 8);
        a = rotl((a ^ w) * k, 29);
        b = rotl((b ^ v) * k, 31);
    }
    if (n >= 8) {
        memcpy(&w, s, 8);
        a = rotl((a ^ w) * k, 29);
        s += 8;
        n -= 8;
    }
    if (n) {
        w = 0;
        memcpy(&w, s, n);
        b = rotl((b ^ w) * k, 31);
    }
    uint64_t h = a ^ rotl(b, 17) * 0xC2B2AE3D27D4EB4FULL;
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ULL;
    return h ^ (h >> 32);
}

typedef struct {
    uint64_t hash;
    int32_t id; /* -1: an empty slot */
} slot_t;

typedef struct {
    int64_t start, len; /* the shape's first line, in the block */
} shape_t;

static int grow(slot_t **slots, size_t *mask) {
    size_t size = (*mask + 1) * 2, i;
    slot_t *bigger = malloc(size * sizeof(slot_t));
    if (bigger == NULL) return -1;
    for (i = 0; i < size; i++) bigger[i].id = -1;
    for (i = 0; i <= *mask; i++) {
        if ((*slots)[i].id < 0) continue;
        size_t at = (*slots)[i].hash & (size - 1);
        while (bigger[at].id >= 0) at = (at + 1) & (size - 1);
        bigger[at] = (*slots)[i];
    }
    free(*slots);
    *slots = bigger;
    *mask = size - 1;
    return 0;
}

static int int64_buffer(PyObject *obj, Py_buffer *view, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    char last = f[strlen(f) - 1];
    if (view->itemsize != 8 || (last != 'q' && last != 'l')) {
        PyErr_Format(PyExc_TypeError, "%s: expected a contiguous int64 array, got format '%s'", what, f);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* shapes(body, starts, ends, index) -> (values, firsts, hex_rows)
 * Line i is body[starts[i]:ends[i]] (the block's lines, in order; none holds a newline). Writes each line's shape
 * number (int32, numbered in the order the shapes first occur, as dictionary_encode numbers them) into `index`, and
 * returns each shape's bytes, the row where each first occurs, and the rows that hold `0x` (ascending). */
static PyObject *shapes(PyObject *self, PyObject *args) {
    PyObject *body_obj, *starts_obj, *ends_obj, *index_obj, *result = NULL;
    if (!PyArg_ParseTuple(args, "OOOO", &body_obj, &starts_obj, &ends_obj, &index_obj)) return NULL;
    Py_buffer body, sv, ev, iv;
    if (PyObject_GetBuffer(body_obj, &body, PyBUF_SIMPLE) < 0) return NULL;
    if (int64_buffer(starts_obj, &sv, "starts") < 0) goto no_starts;
    if (int64_buffer(ends_obj, &ev, "ends") < 0) goto no_ends;
    if (PyObject_GetBuffer(index_obj, &iv, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) goto no_index;

    Py_ssize_t n = sv.len / 8, len = body.len, i;
    const int64_t *starts = sv.buf, *ends = ev.buf;
    int32_t *index = iv.buf;
    const unsigned char *raw = body.buf;
    if (iv.itemsize != 4 || iv.format == NULL || iv.format[strlen(iv.format) - 1] != 'i' || iv.len / 4 != n
        || ev.len / 8 != n) {
        PyErr_SetString(PyExc_ValueError, "shapes: starts, ends and an int32 index of the same length expected");
        goto done;
    }
    for (i = 0; i < n; i++) {
        if (starts[i] < 0 || starts[i] > ends[i] || ends[i] > len || (i && starts[i] <= ends[i - 1])) {
            PyErr_Format(PyExc_ValueError, "shapes: line %zd spans %lld..%lld, outside the body or out of order", i,
                         (long long)starts[i], (long long)ends[i]);
            goto done;
        }
    }

    /* the whole block made its shapes at once, into a buffer this thread keeps for the next block (memory the kernel
     * maps afresh for each block would cost more than the pass); each line is then hashed and looked up there */
    static __thread unsigned char *shaped = NULL;
    static __thread size_t shaped_size = 0;
    size_t mask = 1023, count = 0, cap = 256;
    if ((size_t)len > shaped_size) {
        free(shaped);
        shaped_size = (size_t)len;
        if ((shaped = malloc(shaped_size)) == NULL) shaped_size = 0;
    }
    slot_t *slots = malloc((mask + 1) * sizeof(slot_t));
    shape_t *found = malloc(cap * sizeof(shape_t));
    int64_t *firsts = malloc(cap * sizeof(int64_t));
    int32_t *next = malloc(cap * sizeof(int32_t)), previous = -1;
    int failed = (len && shaped == NULL) || slots == NULL || found == NULL || firsts == NULL || next == NULL;
    Py_BEGIN_ALLOW_THREADS
    if (!failed) {
        for (i = 0; i <= (Py_ssize_t)mask; i++) slots[i].id = -1;
        for (i = 0; i < len; i++) { /* SHAPE_TABLE: a loop compilers vectorize */
            unsigned char c = raw[i];
            shaped[i] = (unsigned char)(c - '1') < 9 ? '0' : c;
        }
        for (i = 0; i < n && !failed; i++) {
            const unsigned char *line = shaped + starts[i];
            size_t size = (size_t)(ends[i] - starts[i]);
            /* logs repeat their runs of lines: the shape that followed this line's predecessor's shape last time is
             * tried first (its bytes compared, so a wrong guess costs a compare and changes no number) */
            int32_t guess = previous >= 0 ? next[previous] : -1;
            if (guess >= 0 && (size_t)found[guess].len == size
                && memcmp(shaped + found[guess].start, line, size) == 0) {
                index[i] = previous = guess;
                continue;
            }
            uint64_t h = hash_bytes(line, size);
            size_t at = h & mask;
            int32_t id = -1;
            for (; slots[at].id >= 0; at = (at + 1) & mask) {
                const shape_t *s = &found[slots[at].id];
                if (slots[at].hash == h && (size_t)s->len == size && memcmp(shaped + s->start, line, size) == 0) {
                    id = slots[at].id;
                    break;
                }
            }
            if (id < 0) { /* a new shape */
                if (count == cap) {
                    cap *= 2;
                    shape_t *more = realloc(found, cap * sizeof(shape_t));
                    if (more != NULL) found = more;
                    int64_t *more_firsts = realloc(firsts, cap * sizeof(int64_t));
                    if (more_firsts != NULL) firsts = more_firsts;
                    int32_t *more_next = realloc(next, cap * sizeof(int32_t));
                    if (more_next != NULL) next = more_next;
                    if (more == NULL || more_firsts == NULL || more_next == NULL) {
                        failed = 1;
                        break;
                    }
                }
                id = (int32_t)count++;
                found[id].start = starts[i];
                found[id].len = (int64_t)size;
                firsts[id] = i;
                next[id] = -1;
                slots[at].hash = h;
                slots[at].id = id;
                if (count * 2 > mask + 1 && grow(&slots, &mask) < 0) failed = 1;
            }
            if (previous >= 0) next[previous] = id;
            index[i] = previous = id;
        }
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto cleanup;
    }

    PyObject *values = PyList_New((Py_ssize_t)count), *first_rows = PyList_New((Py_ssize_t)count);
    PyObject *hex_rows = PyList_New(0);
    if (values == NULL || first_rows == NULL || hex_rows == NULL) goto lists_failed;
    for (size_t j = 0; j < count; j++) {
        PyObject *v = PyBytes_FromStringAndSize((const char *)shaped + found[j].start, found[j].len);
        PyObject *r = PyLong_FromLongLong(firsts[j]);
        if (v == NULL || r == NULL) {
            Py_XDECREF(v);
            Py_XDECREF(r);
            goto lists_failed;
        }
        PyList_SET_ITEM(values, j, v);
        PyList_SET_ITEM(first_rows, j, r);
    }
    /* the rows holding `0x`: an `x` found by memchr (rarer than `0`, and memchr is far faster than memmem) after a
     * `0`. A hit's row is the last that starts at or before it; the search goes on from that row's end (one entry per
     * row). (No line holds a newline, so a hit between lines cannot be.) */
    {
        const unsigned char *end = raw + len, *p = len > 1 ? raw + 1 : end;
        Py_ssize_t row = 0;
        while (p < end && (p = memchr(p, 'x', (size_t)(end - p))) != NULL) {
            if (p[-1] != '0') {
                p++;
                continue;
            }
            int64_t off = p - 1 - raw;
            Py_ssize_t lo = row, hi = n; /* the last row with starts[row] <= off */
            while (hi - lo > 1) {
                Py_ssize_t mid = lo + (hi - lo) / 2;
                if (starts[mid] <= off) lo = mid; else hi = mid;
            }
            row = lo;
            if (n && starts[row] <= off && off + 2 <= ends[row]) {
                PyObject *r = PyLong_FromSsize_t(row);
                if (r == NULL || PyList_Append(hex_rows, r) < 0) {
                    Py_XDECREF(r);
                    goto lists_failed;
                }
                Py_DECREF(r);
                p = raw + ends[row] + 1; /* the next row's start (an x there follows a newline, not a 0) */
                if (row + 1 < n) row++;
            } else {
                p++;
            }
        }
    }
    result = PyTuple_Pack(3, values, first_rows, hex_rows);
lists_failed:
    Py_XDECREF(values);
    Py_XDECREF(first_rows);
    Py_XDECREF(hex_rows);
cleanup:
    free(slots);
    free(found);
    free(firsts);
    free(next);
done:
    PyBuffer_Release(&iv);
no_index:
    PyBuffer_Release(&ev);
no_ends:
    PyBuffer_Release(&sv);
no_starts:
    PyBuffer_Release(&body);
    return result;
}

/* --- decimals ------------------------------------------------------------------------------------------------- */

/* decimals(body, starts, offsets, counts, out)
 * The whole numbers that digits write in lines of one shape (the progress fields of logblocks.ShapeColumns): row r's
 * number k is read off the counts[k] digits at body[starts[r] + offsets[...]] (consecutive offsets, number after
 * number), first digit first, into out[r, k] (int64). Every such byte is a digit: lines of one shape hold digits at
 * the same offsets. Exact: at most 18 digits a number (the caller reads at most 15). */
static PyObject *decimals(PyObject *self, PyObject *args) {
    PyObject *body_obj, *starts_obj, *offsets_obj, *counts_obj, *out_obj, *result = NULL;
    if (!PyArg_ParseTuple(args, "OOOOO", &body_obj, &starts_obj, &offsets_obj, &counts_obj, &out_obj)) return NULL;
    Py_buffer body, sv, ov, cv, outv;
    if (PyObject_GetBuffer(body_obj, &body, PyBUF_SIMPLE) < 0) return NULL;
    if (int64_buffer(starts_obj, &sv, "starts") < 0) goto no_starts;
    if (int64_buffer(offsets_obj, &ov, "offsets") < 0) goto no_offsets;
    if (int64_buffer(counts_obj, &cv, "counts") < 0) goto no_counts;
    if (PyObject_GetBuffer(out_obj, &outv, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) goto no_out;
    {
        const unsigned char *raw = body.buf;
        const int64_t *starts = sv.buf, *offsets = ov.buf, *counts = cv.buf;
        int64_t *out = outv.buf;
        Py_ssize_t rows = sv.len / 8, n_offsets = ov.len / 8, numbers = cv.len / 8, r, k, d;
        int64_t total = 0, low = 0, high = -1;
        char last = outv.format ? outv.format[strlen(outv.format) - 1] : 'B';
        for (k = 0; k < numbers; k++) {
            if (counts[k] < 0 || counts[k] > 18) break;
            total += counts[k];
        }
        if (k < numbers || total != n_offsets || outv.itemsize != 8 || (last != 'q' && last != 'l')
            || outv.len / 8 != rows * numbers) {
            PyErr_SetString(PyExc_ValueError, "decimals: counts (0-18 each) must add up to the offsets, and out be an "
                                              "int64 array of len(starts) x len(counts)");
            goto done;
        }
        for (k = 0; k < n_offsets; k++) {
            if (offsets[k] < low) low = offsets[k];
            if (offsets[k] > high) high = offsets[k];
        }
        for (r = 0; r < rows; r++) {
            if (n_offsets && (starts[r] + low < 0 || starts[r] + high >= body.len)) {
                PyErr_Format(PyExc_ValueError, "decimals: row %zd's digits (%lld + %lld..%lld) are outside the body",
                             r, (long long)starts[r], (long long)low, (long long)high);
                goto done;
            }
            const unsigned char *line = raw + starts[r];
            const int64_t *at = offsets;
            for (k = 0; k < numbers; k++) {
                int64_t value = 0;
                for (d = 0; d < counts[k]; d++, at++) {
                    unsigned digit = (unsigned)line[*at] - '0';
                    if (digit > 9) {
                        PyErr_Format(PyExc_ValueError, "decimals: row %zd holds '%c', not a digit, at offset %lld", r,
                                     line[*at], (long long)*at);
                        goto done;
                    }
                    value = value * 10 + (int64_t)digit;
                }
                out[r * numbers + k] = value;
            }
        }
        Py_INCREF(Py_None);
        result = Py_None;
    }
done:
    PyBuffer_Release(&outv);
no_out:
    PyBuffer_Release(&cv);
no_counts:
    PyBuffer_Release(&ov);
no_offsets:
    PyBuffer_Release(&sv);
no_starts:
    PyBuffer_Release(&body);
    return result;
}

static PyMethodDef methods[] = {
    {"newlines", newlines, METH_O, "newlines(body) -> bytes: the offsets of body's newlines, as int64."},
    {"shapes", shapes, METH_VARARGS,
     "shapes(body, starts, ends, index) -> (values, firsts, hex_rows): each line's shape (digits 1-9 made 0), numbered "
     "by first occurrence into index (int32); the shapes' bytes, their first rows, and the rows holding 0x."},
    {"decimals", decimals, METH_VARARGS,
     "decimals(body, starts, offsets, counts, out): the whole numbers written by the digits at starts[r] + offsets, "
     "counts[k] digits each, into out[r, k] (int64)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lines", "The log scan's per-byte passes, compiled.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__lines(void) { return PyModule_Create(&module); }
