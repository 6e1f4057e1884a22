/* SPDX-License-Identifier: MIT */
/*
 * test_json.c - lb_json output: exact layout of a small document, then a
 * document with nesting, escapes and awkward doubles parsed by Python's json
 * module (tests/check_json.py, passed as argv[1]) and compared in canonical
 * form, then 2000 random doubles that must read back bit-for-bit; and the
 * "interrupted" fields every result file shares (lib/lb_schema.h).
 */
#include "lb_json.h"
#include "lb_schema.h"
#include "tap.h"

#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NDOUBLES 2000

static const char *script;

/* Run check_json.py on text; returns its canonical output or NULL. */
static char *python_canon(const char *text)
{
	char tmp[] = "/tmp/lb-test-json.XXXXXX", cmd[512], *out = NULL;
	size_t cap = 0, len = 0, n;
	int fd = mkstemp(tmp);
	if (fd < 0)
		return NULL;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		unlink(tmp);
		return NULL;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s'", script, tmp);
	FILE *p = popen(cmd, "r");
	if (p) {
		do {
			if (len + 4096 + 1 > cap) {
				cap = 2 * cap + 4096 + 1;
				out = realloc(out, cap);
			}
			n = fread(out + len, 1, cap - len - 1, p);
			len += n;
		} while (n > 0);
		out[len] = '\0';
		if (pclose(p) != 0) {
			free(out);
			out = NULL;
		}
	}
	unlink(tmp);
	return out;
}

/* A document written into memory: *buf holds it once the stream is closed. */
static FILE *doc_open(struct lb_json *j, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	lb_json_init(j, f);
	return f;
}

static void test_layout(void)
{
	static const char expect[] = "{\n"
				     "  \"a\": 1,\n"
				     "  \"b\": [\n"
				     "    1,\n"
				     "    {},\n"
				     "    []\n"
				     "  ],\n"
				     "  \"c\": [\n"
				     "    1,\n"
				     "    64\n"
				     "  ],\n"
				     "  \"d\": []\n"
				     "}\n";
	static const unsigned int counts[] = { 1, 64 };
	char *buf;
	size_t len;
	struct lb_json j;
	FILE *f = doc_open(&j, &buf, &len);
	lb_json_object_begin(&j);
	lb_json_kv_int(&j, "a", 1);
	lb_json_key(&j, "b");
	lb_json_array_begin(&j);
	lb_json_int(&j, 1);
	lb_json_object_begin(&j);
	lb_json_object_end(&j);
	lb_json_array_begin(&j);
	lb_json_array_end(&j);
	lb_json_array_end(&j);
	lb_json_kv_uint_array(&j, "c", counts, 2);
	lb_json_kv_uint_array(&j, "d", counts, 0);
	lb_json_object_end(&j);
	fclose(f);
	if (!tap_ok(strcmp(buf, expect) == 0,
		    "pretty layout: 2-space indent, commas, empty containers, uint arrays"))
		tap_diag("got:\n%s", buf);
	free(buf);
}

static void write_doc(struct lb_json *j)
{
	lb_json_object_begin(j);
	lb_json_kv_string(j, "name", "lock\"bench\\ \n\t\x01\x1f \xc3\xa9/");
	lb_json_kv_int(j, "n", -42);
	lb_json_kv_int(j, "i64min", INT64_MIN);
	lb_json_kv_uint(j, "u", UINT64_MAX);
	lb_json_kv_double(j, "pi", 3.141592653589793);
	lb_json_kv_double(j, "tenth", 0.1);
	lb_json_kv_double(j, "third", 1.0 / 3);
	lb_json_kv_double(j, "tiny", 5e-324);
	lb_json_kv_double(j, "big", DBL_MAX);
	lb_json_kv_double(j, "two", 2.0);
	lb_json_kv_double(j, "nan", NAN);
	lb_json_kv_double(j, "inf", -INFINITY);
	lb_json_kv_bool(j, "yes", true);
	lb_json_kv_bool(j, "no", false);
	lb_json_kv_string(j, "nil", NULL);
	lb_json_key(j, "empty_obj");
	lb_json_object_begin(j);
	lb_json_object_end(j);
	lb_json_key(j, "nested");
	lb_json_object_begin(j);
	lb_json_key(j, "list");
	lb_json_array_begin(j);
	lb_json_uint(j, 1);
	lb_json_array_begin(j);
	lb_json_int(j, 2);
	lb_json_object_begin(j);
	lb_json_kv_string(j, "k", "v");
	lb_json_object_end(j);
	lb_json_array_end(j);
	lb_json_string(j, "x");
	lb_json_null(j);
	lb_json_array_end(j);
	lb_json_key(j, "obj");
	lb_json_object_begin(j);
	lb_json_key(j, "a");
	lb_json_object_begin(j);
	lb_json_kv_double(j, "b", 1.5);
	lb_json_object_end(j);
	lb_json_object_end(j);
	lb_json_object_end(j);
	lb_json_object_end(j);
}

static void test_document(void)
{
	static const char canon[] =
		"{\"big\":1.7976931348623157e+308,\"empty_obj\":{},\"i64min\":-9223372036854775808,"
		"\"inf\":null,\"n\":-42,\"name\":\"lock\\\"bench\\\\ \\n\\t\\u0001\\u001f \\u00e9/\","
		"\"nan\":null,\"nested\":{\"list\":[1,[2,{\"k\":\"v\"}],\"x\",null],"
		"\"obj\":{\"a\":{\"b\":1.5}}},\"nil\":null,\"no\":false,\"pi\":3.141592653589793,"
		"\"tenth\":0.1,\"third\":0.3333333333333333,\"tiny\":5e-324,\"two\":2,"
		"\"u\":18446744073709551615,\"yes\":true}";
	char *buf, *got;
	size_t len;
	struct lb_json j;
	FILE *f = doc_open(&j, &buf, &len);
	write_doc(&j);
	fclose(f);

	tap_ok(strstr(buf, "\\u0001\\u001f") != NULL, "control characters written as \\u00XX");
	tap_ok(strstr(buf, "\"nan\": null") && strstr(buf, "\"inf\": null"), "NaN and -Inf written as null");
	tap_ok(strstr(buf, "\"tenth\": 0.1,") != NULL, "0.1 written as 0.1, not 17 digits");
	got = python_canon(buf);
	if (!tap_ok(got != NULL, "python json.load accepts the document"))
		tap_diag("document:\n%s", buf);
	if (!tap_ok(got && strcmp(got, canon) == 0, "every value round-trips through python"))
		tap_diag("canonical form:\n%s", got ? got : "(none)");
	free(got);
	free(buf);
}

/* Random finite doubles (random bit patterns) must read back exactly. */
static void test_doubles(void)
{
	static double v[NDOUBLES];
	uint64_t s = 88172645463325252ull;
	char *buf, *got, *p;
	size_t len;
	struct lb_json j;
	bool ok = true;

	for (int i = 0; i < NDOUBLES; i++) {
		do {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			memcpy(&v[i], &s, sizeof(v[i]));
		} while (!isfinite(v[i]));
	}
	FILE *f = doc_open(&j, &buf, &len);
	lb_json_array_begin(&j);
	for (int i = 0; i < NDOUBLES; i++)
		lb_json_double(&j, v[i]);
	lb_json_array_end(&j);
	fclose(f);

	got = python_canon(buf);
	p = got ? got + 1 : NULL; /* past '[' */
	for (int i = 0; i < NDOUBLES && p; i++) {
		char *end;
		double d = strtod(p, &end);
		if (end == p || memcmp(&d, &v[i], sizeof(d)) != 0) {
			tap_diag("value %d: wrote %.17g, read back %.17g", i, v[i], d);
			ok = false;
			break;
		}
		p = end + 1; /* past ',' or ']' */
	}
	tap_ok(got && ok, "%d random doubles round-trip bit-exactly through python", NDOUBLES);
	free(got);
	free(buf);
}

/* lb_schema_write_interrupted: a flag alone, or the flag and the signal's name. */
static void test_interrupted(void)
{
	static const char *const expect[] = {
		"{\n  \"interrupted\": false\n}\n",
		"{\n  \"interrupted\": true,\n  \"interrupted_by\": \"SIGTERM\"\n}\n",
	};
	static const int signo[] = { 0, SIGTERM };
	for (int i = 0; i < 2; i++) {
		char *buf;
		size_t len;
		struct lb_json j;
		FILE *f = doc_open(&j, &buf, &len);
		lb_json_object_begin(&j);
		lb_schema_write_interrupted(&j, signo[i]);
		lb_json_object_end(&j);
		fclose(f);
		if (!tap_ok(strcmp(buf, expect[i]) == 0, "interrupted fields, signal %d", signo[i]))
			tap_diag("got:\n%s", buf);
		free(buf);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2)
		tap_skip_all("usage: test-json path/to/check_json.py");
	if (system("python3 -c '' >/dev/null 2>&1") != 0)
		tap_skip_all("python3 not available");
	script = argv[1];
	tap_diag("test_json: checker=%s doubles=%d", script, NDOUBLES);
	test_layout();
	test_document();
	test_doubles();
	test_interrupted();
	return tap_done();
}
