/*
 * s3_conf.c - where S3 requests go and whose keys sign them: the AWS_*
 * variables first, then the AWS_PROFILE's (default "default") entries in
 * ~/.aws/credentials and ~/.aws/config, the way the AWS CLI reads them
 * (only the keys this backend uses), and s3:// URLs turned into HTTP ones.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "s3.h"

/* One "key = value" of section [want] in INI file path, strdup'ed, or
 * NULL.  ~/.aws/config names a profile's section "profile NAME" (but
 * "default"); want is given as the file spells it. */
static char *ini_get(const char *path, const char *want, const char *key)
{
	char line[1024], *val = NULL;
	int in = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	while (!val && fgets(line, sizeof(line), f)) {
		char *p = line, *eq, *end;

		while (isspace((unsigned char)*p))
			p++;
		end = p + strlen(p);
		while (end > p && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (*p == '[') {
			in = end > p && end[-1] == ']' &&
			     (size_t)(end - p - 2) == strlen(want) &&
			     !strncmp(p + 1, want, strlen(want));
			continue;
		}
		eq = strchr(p, '=');
		if (!in || !eq)
			continue;
		end = eq;
		while (end > p && isspace((unsigned char)end[-1]))
			end--;
		if ((size_t)(end - p) != strlen(key) ||
		    strncmp(p, key, strlen(key)))
			continue;
		for (p = eq + 1; isspace((unsigned char)*p); p++)
			;
		val = strdup(p);
	}
	fclose(f);
	return val;
}

/* ~/.aws/NAME, or the file the variable var names (as the AWS CLI's
 * AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE). */
static void aws_file(char *buf, size_t cap, const char *var,
		     const char *name)
{
	const char *set = getenv(var), *home = getenv("HOME");

	if (set && *set)
		snprintf(buf, cap, "%s", set);
	else
		snprintf(buf, cap, "%s/.aws/%s", home ? home : "", name);
}

/* Variable var if set and not empty, else the profile's key (credentials
 * first, then config), strdup'ed; NULL if neither has it. */
static char *setting(const char *profile, const char *var, const char *key)
{
	const char *v = getenv(var);
	char path[4096], section[256];
	char *got;

	if (v && *v)
		return strdup(v);
	aws_file(path, sizeof(path), "AWS_SHARED_CREDENTIALS_FILE",
		 "credentials");
	got = ini_get(path, profile, key);
	if (got)
		return got;
	aws_file(path, sizeof(path), "AWS_CONFIG_FILE", "config");
	snprintf(section, sizeof(section), strcmp(profile, "default") ?
		 "profile %s" : "%s", profile);
	return ini_get(path, section, key);
}

void zr__s3_conf_free(struct zr__s3_conf *c)
{
	free(c->endpoint);
	free(c->region);
	free(c->key_id);
	free(c->secret);
	free(c->token);
	free(c->profile);
	memset(c, 0, sizeof(*c));
}

int zr__s3_conf_load(struct zr__s3_conf *c)
{
	const char *p = getenv("AWS_PROFILE");
	size_t n;

	memset(c, 0, sizeof(*c));
	c->profile = strdup(p && *p ? p : "default");
	if (!c->profile)
		return -ENOMEM;
	c->key_id = setting(c->profile, "AWS_ACCESS_KEY_ID",
			    "aws_access_key_id");
	c->secret = setting(c->profile, "AWS_SECRET_ACCESS_KEY",
			    "aws_secret_access_key");
	c->token = setting(c->profile, "AWS_SESSION_TOKEN",
			   "aws_session_token");
	c->region = setting(c->profile, "AWS_REGION", "region");
	c->endpoint = setting(c->profile, "AWS_ENDPOINT_URL", "endpoint_url");
	if (!c->region)
		c->region = strdup("us-east-1");
	if (!c->key_id || !c->secret || !c->region) {
		zr__cause("no S3 credentials: set AWS_ACCESS_KEY_ID and "
			  "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (profile "
			  "\"%s\" has none in ~/.aws/credentials)", c->profile);
		zr__s3_conf_free(c);
		return -EACCES;
	}
	n = c->endpoint ? strlen(c->endpoint) : 0;
	while (n && c->endpoint[n - 1] == '/')
		c->endpoint[--n] = '\0';
	return 0;
}

/* key percent-encoded (but for its '/' in a path: SigV4 signs S3 paths
 * encoded once, as written), appended to out[*n..cap). */
static void put_key(char *out, size_t cap, size_t *n, const char *key,
		    int path)
{
	for (const unsigned char *k = (const unsigned char *)key; *k; k++) {
		int plain = isalnum(*k) || strchr("-._~", *k) ||
			    (path && *k == '/');

		*n += (size_t)snprintf(out + *n, *n < cap ? cap - *n : 0,
				       plain ? "%c" : "%%%02X", *k);
	}
}

/* The bucket's HTTP URL (ending in '/') into a new string. */
static char *bucket_url(const struct zr__s3_conf *c, const char *bucket)
{
	char *u;
	int n;

	if (c->endpoint) /* path-style: a custom endpoint has no DNS per
			  * bucket */
		n = asprintf(&u, "%s/%s/", c->endpoint, bucket);
	else if (strchr(bucket, '.')) /* dots break the TLS wildcard */
		n = asprintf(&u, "https://s3.%s.amazonaws.com/%s/", c->region,
			     bucket);
	else
		n = asprintf(&u, "https://%s.s3.%s.amazonaws.com/", bucket,
			     c->region);
	return n < 0 ? NULL : u;
}

void zr__s3_obj_free(struct zr__s3_obj *o)
{
	free(o->url);
	free(o->bucket);
	free(o->http);
	free(o->http_bucket);
	memset(o, 0, sizeof(*o));
}

int zr__s3_obj_parse(const struct zr__s3_conf *c, const char *url,
		     struct zr__s3_obj *o)
{
	const char *b = url + strlen("s3://"), *slash = strchr(b, '/');
	size_t blen = slash ? (size_t)(slash - b) : strlen(b), cap, n;

	memset(o, 0, sizeof(*o));
	if (!blen) {
		zr__cause("no bucket: s3://BUCKET/PREFIX");
		return -EINVAL;
	}
	o->url = strdup(url);
	o->bucket = strndup(b, blen);
	o->http_bucket = o->bucket ? bucket_url(c, o->bucket) : NULL;
	if (!o->url || !o->http_bucket) {
		zr__s3_obj_free(o);
		return -ENOMEM;
	}
	o->key = o->url + (slash ? (size_t)(slash + 1 - url) : strlen(url));
	cap = strlen(o->http_bucket) + 3 * strlen(o->key) + 1;
	o->http = malloc(cap);
	if (!o->http) {
		zr__s3_obj_free(o);
		return -ENOMEM;
	}
	n = (size_t)snprintf(o->http, cap, "%s", o->http_bucket);
	put_key(o->http, cap, &n, o->key, 1);
	return 0;
}

char *zr__s3_list_query(const struct zr__s3_obj *o, const char *prefix,
			int delimit, unsigned max, const char *token)
{
	/* curl 7.88 signs the query as written: sorted, every value
	 * encoded (docs/many-hosts.md) */
	size_t cap = strlen(o->http_bucket) + 128 +
		     3 * (strlen(prefix) + (token ? strlen(token) : 0)), n;
	char *u = malloc(cap);

	if (!u)
		return NULL;
	n = (size_t)snprintf(u, cap, "%s?", o->http_bucket);
	if (token) {
		n += (size_t)snprintf(u + n, cap - n, "continuation-token=");
		put_key(u, cap, &n, token, 0);
		n += (size_t)snprintf(u + n, cap - n, "&");
	}
	n += (size_t)snprintf(u + n, cap - n, "%slist-type=2&max-keys=%u"
			      "&prefix=", delimit ? "delimiter=%2F&" : "",
			      max);
	put_key(u, cap, &n, prefix, 0);
	return u;
}

int zr__s3_obj_child(const struct zr__s3_conf *c, const char *prefix,
		     const char *name, struct zr__s3_obj *o)
{
	char *url;
	int err;

	if (asprintf(&url, "%s/%s", prefix, name) < 0)
		return -ENOMEM;
	err = zr__s3_obj_parse(c, url, o);
	free(url);
	return err;
}
