"""A prefix's listing is untrusted input: a fake S3 endpoint (a thread of
this process, no Ceph) answers `zrecord ls s3://b/p`'s ListObjectsV2
requests with malformed, endless, huge, deep and hostile pages; each
fails with a message naming the URL (or finds no store), in a bounded
number of requests, and never crashes the command."""
import http.server
import threading
import urllib.parse

import pytest

HEAD = '<?xml version="1.0"?><ListBucketResult>'


def page(keys=(), dirs=(), token=None, raw=""):
    body = HEAD + raw
    body += "".join(f"<Contents><Key>{k}</Key><Size>1</Size></Contents>"
                    for k in keys)
    body += "".join(f"<CommonPrefixes><Prefix>{d}</Prefix>"
                    "</CommonPrefixes>" for d in dirs)
    if token is not None:
        body += ("<IsTruncated>true</IsTruncated><NextContinuationToken>"
                 f"{token}</NextContinuationToken>")
    return body + "</ListBucketResult>"


class Fake(http.server.BaseHTTPRequestHandler):
    """HEAD and manifest GETs: 404 (no store at the URL itself); a
    listing: what the test's answer function gives for (prefix, token)."""
    answer = None
    lists = 0

    def log_message(self, *args):
        pass

    def reply(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        # the bucket is there; no object is
        self.reply(200 if self.path.rstrip("/") == "/b" else 404)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        if "list-type" not in q:
            return self.reply(404, b"<Error><Code>NoSuchKey</Code></Error>")
        if q.get("max-keys") == "1":  # the probe's "is it a folder"
            return self.reply(200, page().encode())
        Fake.lists += 1
        got = Fake.answer(q.get("prefix", ""), q.get("continuation-token"))
        self.reply(200, got.encode() if isinstance(got, str) else got)


@pytest.fixture
def fake():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    Fake.lists = 0
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:%d" % srv.server_port,
           "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s",
           "AWS_REGION": "us-east-1", "AWS_PROFILE": "none"}
    yield env
    srv.shutdown()


def ls_fails(zr, env, answer):
    Fake.answer = staticmethod(answer)
    r = zr.run("ls", "s3://b/p", env=env, timeout=120)
    err = r.stderr.decode()
    assert r.returncode == 1 and "s3://b/p" in err, err
    return err


def test_a_malformed_key_is_refused(zr, fake):
    err = ls_fails(zr, fake, lambda p, t: page(raw="<Contents><Key>p/x"))
    assert "malformed <Key>" in err, err


@pytest.mark.parametrize("key", ["p/&bogus;", "p/&#0;", "p/&#xZZ;",
                                 "p/&"])
def test_a_bad_reference_is_refused(zr, fake, key):
    err = ls_fails(zr, fake, lambda p, t: page(keys=[key]))
    assert "malformed" in err, err


def test_more_without_a_token_is_refused(zr, fake):
    err = ls_fails(zr, fake, lambda p, t: page(
        keys=["p/x"], raw="<IsTruncated>true</IsTruncated>"))
    assert "continuation token" in err, err


def test_the_same_token_again_is_refused(zr, fake):
    err = ls_fails(zr, fake, lambda p, t: page(keys=["p/x"], token="T"))
    assert "continuation token" in err and Fake.lists == 2, err


def test_an_empty_page_that_says_more_is_refused(zr, fake):
    err = ls_fails(zr, fake, lambda p, t: page(token=(t or "") + "x"))
    assert "empty" in err and Fake.lists == 1, err


def test_an_answer_over_its_cap_is_refused(zr, fake):
    big = page(keys=["p/" + "x" * 200] * 12000)  # over 2 MiB
    ls_fails(zr, fake, lambda p, t: big)
    assert Fake.lists >= 1


def test_endless_pages_stop_at_the_bound(zr, fake):
    """1000 new folders a page, forever: refused at ZR_STORE_LIST_MAX
    (100000) names, after about 100 requests."""
    def endless(p, t):
        n = int(t or 0)
        return page(dirs=[f"p/d{n + i}/" for i in range(1000)],
                    token=str(n + 1000))
    err = ls_fails(zr, fake, endless)
    assert "over 100000 keys and folders" in err, err
    assert Fake.lists <= 101


def test_names_no_folder_can_have_are_passed_over(zr, fake):
    """"", ".", ".." and a 300-byte name hold the only meta.zr: no store
    is found (and none of them is listed into)."""
    bad = ["p//", "p/./", "p/../", "p/" + "n" * 300 + "/"]

    def answer(p, t):
        return page(dirs=bad) if p == "p/" else page(keys=[p + "meta.zr"])
    err = ls_fails(zr, fake, answer)
    assert "no store at or under" in err and Fake.lists == 1, err


def test_a_deep_chain_stops_at_32_levels(zr, fake):
    def answer(p, t):
        return page(dirs=[p + "a/"])
    err = ls_fails(zr, fake, answer)
    assert "no store at or under" in err and Fake.lists == 33, err


def test_keys_outside_the_prefix_are_ignored(zr, fake):
    def answer(p, t):
        return page(keys=["q/meta.zr", "meta.zr"], dirs=["other/"])
    err = ls_fails(zr, fake, answer)
    assert "no store at or under" in err and Fake.lists == 1, err


def test_a_listing_never_answered_names_the_url(zr, fake):
    def answer(p, t):
        raise RuntimeError  # the connection closes with no answer
    ls_fails(zr, fake, answer)
