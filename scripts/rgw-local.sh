#!/bin/sh
# rgw-local.sh - a throwaway one-host Ceph cluster on 127.0.0.1 (one
# ceph-mon, one ceph-osd on memstore, one radosgw) for the S3 tests and
# benchmarks: a real S3 engine, Debian 12's own packages, nothing on the
# network beyond loopback and nothing outside DIR (no systemd, no /etc/ceph,
# no /var/lib/ceph: every daemon and client is run with -c DIR/ceph.conf).
#
#   scripts/rgw-local.sh start DIR   start it in DIR (new or empty), make a
#                                    user and a bucket, print export lines
#   scripts/rgw-local.sh stop DIR    stop what start started, by PID
#   scripts/rgw-local.sh curl DIR ARGS...
#                                    curl signed with DIR's keys (SigV4)
#
# start prints AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
# AWS_REGION and ZR_S3_BUCKET as export lines (also kept in DIR/env), so
#   eval "$(scripts/rgw-local.sh start "$dir")"
# points an S3 client at it.  Environment: RGW_LOCAL_PORT and
# RGW_LOCAL_MON_PORT (default: free ports picked at start),
# RGW_LOCAL_BUCKET (zrtest), RGW_LOCAL_REGION (us-east-1),
# RGW_LOCAL_STORE_MB (memstore size, 1024), RGW_LOCAL_TIMEOUT (seconds
# each step may take, 60).  On failure start prints the daemons' last log
# lines, stops what it started and exits 1.  See docs/many-hosts.md, "The
# S3 test engine".
set -eu
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
me=rgw-local
top=$(cd "$(dirname "$0")/.." && pwd)

usage() {
	echo "usage: $0 start|stop DIR, or $0 curl DIR CURL-ARGS..." >&2
	exit 2
}

say() {
	echo "$me: $*" >&2
}

# A free TCP port on 127.0.0.1, from the kernel (bind to port 0).
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# Random hex characters from the kernel, $1 bytes' worth.
random_hex() {
	od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'
}

# Log step $1 with the seconds since start began, to DIR/log/start.log.
step() {
	echo "$(( $(date +%s) - t0 )) s: $1" >>"$D/log/start.log"
}

uuid() {
	cat /proc/sys/kernel/random/uuid
}

need_binaries() {
	for b in ceph-mon ceph-osd radosgw radosgw-admin ceph ceph-authtool \
	    monmaptool curl python3; do
		command -v "$b" >/dev/null 2>&1 || return 1
	done
}

install_binaries() {
	need_binaries && return 0
	say "Ceph is missing: installing it (scripts/deps.sh ceph)"
	"$top/scripts/deps.sh" ceph
	need_binaries || { say "Ceph binaries still missing after deps.sh"; \
		exit 1; }
}

write_conf() {
	cat >"$D/ceph.conf" <<EOF
# Written by rgw-local.sh: a one-host throwaway cluster on loopback.
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
mon initial members = a
public addr = 127.0.0.1
cluster addr = 127.0.0.1
public network = 127.0.0.1/32
ms bind msgr1 = false
ms bind ipv6 = false
run dir = $D/run
admin socket = $D/run/\$name.asok
pid file = $D/run/\$name.pid
log file = $D/log/\$name.log
crash dir = $D/crash
keyring = $D/keyring
auth allow insecure global id reclaim = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
[mon]
mon data = $D/mon
mon cluster log file = default=$D/log/\$cluster.\$channel.log cluster=$D/log/\$cluster.log
mon allow pool size one = true
paxos propose interval = 0.05
mon warn on pool no redundancy = false
mon mgr mkfs grace = 31536000
mon data avail warn = 2
mon data avail crit = 1
mon memory target = 268435456
rocksdb cache size = 67108864
[osd]
osd data = $D/osd
osd objectstore = memstore
memstore device bytes = $(( ${RGW_LOCAL_STORE_MB:-1024} * 1048576 ))
osd op num shards = 2
osd op num threads per shard = 1
[client.rgw.a]
rgw data = $D/rgw
rgw frontends = beast endpoint=127.0.0.1:$rgw_port tcp_nodelay=1
rgw thread pool size = 16
rgw dynamic resharding = false
rgw enable lc threads = false
EOF
}

# The mon., client.admin, osd.0 and client.rgw.a keys in one keyring, which
# the mon imports at mkfs: no ceph auth round trips later.  The keys are
# written here in ceph-authtool's encoding (type 1 = AES, creation time,
# 16 random bytes): one process instead of four on a loaded machine.
write_keyring() {
	python3 - "$D/keyring" <<'EOF'
import base64, os, struct, sys, time
caps = {
    "mon.": {"mon": "allow *"},
    "client.admin": {"mon": "allow *", "osd": "allow *", "mgr": "allow *"},
    "osd.0": {"mon": "allow profile osd", "osd": "allow *",
              "mgr": "allow profile osd"},
    "client.rgw.a": {"mon": "allow rw", "osd": "allow rwx"},
}
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
with os.fdopen(fd, "w") as f:
    for name, c in caps.items():
        key = struct.pack("<HIIH", 1, int(time.time()), 0, 16) + os.urandom(16)
        f.write("[%s]\n\tkey = %s\n" % (name, base64.b64encode(key).decode()))
        for k, v in c.items():
            f.write('\tcaps %s = "%s"\n' % (k, v))
EOF
}

# asok_wait SOCKET WHAT [PGS]: poll a daemon's admin socket from one process
# (a ceph CLI run per poll costs seconds on a loaded machine) until the OSD
# is active or, given PGS, until that many PGs are active+clean; fails
# after RGW_LOCAL_TIMEOUT seconds or as soon as a daemon in DIR/pids dies.
# No ceph-mgr runs (see docs): the OSD is the one that knows its PGs' states.
asok_wait() {
	python3 - "$D/pids" "${RGW_LOCAL_TIMEOUT:-60}" "$@" <<'EOF'
import json, os, socket, struct, sys, time

def ask(path, prefix):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    s.sendall(json.dumps({"prefix": prefix}).encode() + b"\0")
    n = struct.unpack(">I", s.recv(4))[0]
    b = b""
    while len(b) < n:
        b += s.recv(n - len(b))
    return json.loads(b)

def ready(path, what, pgs):
    if what == "active":
        return ask(path, "status")["state"] == "active"
    st = [p["currently"] for p in ask(path, "dump_pgstate_history")["pgs"]]
    return st.count("Started/Primary/Active/Clean") == pgs == len(st)

def alive(pids):
    for line in open(pids):
        name, pid = line.split()
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
    return True

pids, timeout, path, what = sys.argv[1:5]
pgs = int(sys.argv[5]) if what == "clean" else 0
end = time.time() + float(timeout)
while time.time() < end and alive(pids):
    try:
        if ready(path, what, pgs):
            sys.exit(0)
    except (OSError, ValueError, KeyError):
        pass
    time.sleep(0.1)
sys.exit(1)
EOF
}

# Run daemon $1 (a name for the logs) in the foreground, in the background:
# its PID is $! at once, not a pid file read later.  In a session of its
# own (setsid execs it in place: a background job leads no group), so a
# Ctrl-C or a timeout(1) meant for the caller does not reach it on top of
# stop's SIGTERM (Ceph 16 aborts on a second signal while it shuts down).
run_daemon() {
	name=$1
	shift
	setsid "$@" -c "$D/ceph.conf" -f </dev/null >"$D/log/$name.out" 2>&1 &
	echo "$name $!" >>"$D/pids"
}

# True while every daemon start started is alive.
daemons_alive() {
	[ -f "$D/pids" ] || return 0
	while read -r name pid; do
		kill -0 "$pid" 2>/dev/null || { say "$name (pid $pid) died"; \
			dead=$name; return 1; }
	done <"$D/pids"
}

# wait_for WHAT CMD...: run CMD every 0.25 s until it succeeds, a daemon
# dies or RGW_LOCAL_TIMEOUT seconds pass.
wait_for() {
	what=$1
	shift
	end=$(( $(date +%s) + ${RGW_LOCAL_TIMEOUT:-60} ))
	until "$@" >/dev/null 2>&1; do
		daemons_alive || fail "$what"
		[ "$(date +%s)" -lt "$end" ] ||
			fail "$what: not within ${RGW_LOCAL_TIMEOUT:-60} s"
		sleep 0.25
	done
}

ceph_cli() {
	timeout "${RGW_LOCAL_TIMEOUT:-60}" \
		ceph -c "$D/ceph.conf" --connect-timeout 30 "$@"
}

start_mon() {
	monmaptool --create --addv a "[v2:127.0.0.1:$mon_port]" \
		--fsid "$fsid" "$D/monmap" >/dev/null ||
		fail "monmaptool"
	ceph-mon -c "$D/ceph.conf" --mkfs -i a --monmap "$D/monmap" \
		--keyring "$D/keyring" >"$D/log/mon-mkfs.out" 2>&1 ||
		fail "ceph-mon --mkfs"
	run_daemon mon ceph-mon -i a
}

start_osd() {
	osd_uuid=$(uuid)
	id=$(ceph_cli osd new "$osd_uuid") || fail "ceph osd new"
	[ "$id" = 0 ] || fail "ceph osd new gave osd.$id, not osd.0"
	ceph-osd -c "$D/ceph.conf" -i 0 --mkfs --osd-uuid "$osd_uuid" \
		>"$D/log/osd-mkfs.out" 2>&1 || fail "ceph-osd --mkfs"
	run_daemon osd ceph-osd -i 0
	asok_wait "$D/run/osd.0.asok" active || { daemons_alive || :; \
		fail "osd.0 up: not within ${RGW_LOCAL_TIMEOUT:-60} s"; }
}

# The PGs of all pools, from the mon's OSD map.
pg_total() {
	ceph_cli osd dump -f json | python3 -c '
import json, sys
print(sum(p["pg_num"] for p in json.load(sys.stdin)["pools"]))'
}

wait_clean() {
	pgs=$(pg_total) || fail "ceph osd dump"
	asok_wait "$D/run/osd.0.asok" clean "$pgs" || { daemons_alive || :; \
		fail "$pgs PGs active+clean: not within ${RGW_LOCAL_TIMEOUT:-60} s"; }
}

rgw_answers() {
	[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$endpoint/")" = 200 ]
}

start_rgw() {
	run_daemon rgw radosgw -n client.rgw.a
	wait_for "radosgw answering on $endpoint" rgw_answers
}

make_user() {
	radosgw-admin -c "$D/ceph.conf" user create --uid zrtest \
		--display-name zrtest --access-key "$access_key" \
		--secret-key "$secret_key" >"$D/log/user.out" 2>&1 ||
		fail "radosgw-admin user create"
}

# curl signed with SigV4 by curl itself.  curl 7.88 signs the body as
# UNSIGNED-PAYLOAD only when told so (RGW, like AWS, then checks that
# header); it does not sort or encode the query: callers pass it sorted,
# encoded and with "=" after every key ("?uploads=").
s3_curl() {
	curl -sS --aws-sigv4 "aws:amz:$region:s3" \
		--user "$access_key:$secret_key" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}

make_bucket() {
	code=$(s3_curl -o "$D/log/bucket.out" -w '%{http_code}' -X PUT \
		"$endpoint/$bucket") || fail "PUT $endpoint/$bucket"
	[ "$code" = 200 ] || fail "PUT $endpoint/$bucket gave HTTP $code"
}

write_env() {
	cat >"$D/env" <<EOF
export AWS_ENDPOINT_URL=$endpoint
export AWS_ACCESS_KEY_ID=$access_key
export AWS_SECRET_ACCESS_KEY=$secret_key
export AWS_REGION=$region
export ZR_S3_BUCKET=$bucket
EOF
}

# The last lines of the logs of the daemon that died ($dead), or of every
# daemon when none did: what a failed start says.
show_logs() {
	case ${dead:-} in
	mon) logs="mon.out mon.a.log" ;;
	osd) logs="osd.out osd.0.log" ;;
	rgw) logs="rgw.out client.rgw.a.log" ;;
	*) logs="mon-mkfs.out osd-mkfs.out user.out bucket.out mon.out osd.out
		rgw.out mon.a.log osd.0.log client.rgw.a.log" ;;
	esac
	for f in $logs; do
		[ -s "$D/log/$f" ] || continue
		echo "--- $D/log/$f (last lines)" >&2
		grep -v '^$' "$D/log/$f" | tail -n 8 >&2
	done
}

fail() {
	trap - EXIT
	say "start failed: $1"
	show_logs
	stop_all
	say "stopped what it started; state left in $D"
	exit 1
}

on_exit() {
	fail "a step failed or start was interrupted (see above)"
}

# $1 is ours if its command line names our ceph.conf, so a PID reused by
# another process after ours died is never signalled.
is_ours() {
	[ -r "/proc/$1/cmdline" ] &&
		tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF "$D/ceph.conf"
}

# Stop one daemon: SIGTERM, up to 10 s, then SIGKILL.
stop_pid() {
	name=$1
	pid=$2
	is_ours "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	n=0
	while is_ours "$pid" && [ "$n" -lt 40 ]; do
		sleep 0.25
		n=$((n + 1))
	done
	is_ours "$pid" || return 0
	say "$name (pid $pid) still running after 10 s: SIGKILL"
	kill -KILL "$pid" 2>/dev/null || :
	while is_ours "$pid"; do sleep 0.1; done
}

# In reverse order of start: radosgw, then the OSD (which tells the mon it
# goes), then the mon.
stop_all() {
	[ -f "$D/pids" ] || return 0
	tac "$D/pids" | while read -r name pid; do
		stop_pid "$name" "$pid"
	done
	rm -f "$D/pids"
}

start() {
	if [ -e "$D" ] && [ -n "$(ls -A "$D")" ]; then
		say "$D is not empty: give a new or empty folder (a running" \
			"engine there stops with: $0 stop $D)"
		exit 1
	fi
	case $D in
	*[[:space:]]*) say "$D: a folder without blanks, please"; exit 1 ;;
	esac
	install_binaries
	t0=$(date +%s)
	mkdir -p "$D"
	D=$(cd "$D" && pwd)
	mkdir -p "$D/run" "$D/log" "$D/mon" "$D/osd" "$D/rgw" "$D/crash"
	CEPH_CONF=$D/ceph.conf
	export CEPH_CONF
	trap on_exit EXIT
	trap 'fail interrupted' INT TERM HUP
	fsid=$(uuid)
	mon_port=${RGW_LOCAL_MON_PORT:-$(free_port)}
	rgw_port=${RGW_LOCAL_PORT:-$(free_port)}
	endpoint=http://127.0.0.1:$rgw_port
	region=${RGW_LOCAL_REGION:-us-east-1}
	bucket=${RGW_LOCAL_BUCKET:-zrtest}
	access_key=$(random_hex 10 | tr a-f A-F)
	secret_key=$(random_hex 20)
	write_conf
	write_keyring
	step "keyring"
	start_mon
	step "mon started"
	start_osd
	step "osd.0 up"
	start_rgw
	step "radosgw answers"
	wait_clean
	step "PGs active+clean"
	make_user
	make_bucket
	write_env
	step "user and bucket $bucket made"
	trap - EXIT INT TERM HUP
	say "started in $(( $(date +%s) - t0 )) s: $endpoint, bucket $bucket"
	cat "$D/env"
}

stop() {
	[ -d "$D" ] || { say "$D: no such folder"; exit 1; }
	D=$(cd "$D" && pwd)
	stop_all
}

# The engine's keys from DIR/env, then one signed curl.
curl_cmd() {
	[ -f "$D/env" ] || { say "$D/env missing: start the engine first"; \
		exit 1; }
	# shellcheck source=/dev/null
	. "$D/env"
	region=$AWS_REGION
	access_key=$AWS_ACCESS_KEY_ID
	secret_key=$AWS_SECRET_ACCESS_KEY
	s3_curl "$@"
}

[ $# -ge 2 ] || usage
cmd=$1
D=$2
shift 2
case $cmd in
start) [ $# -eq 0 ] || usage; start ;;
stop) [ $# -eq 0 ] || usage; stop ;;
curl) curl_cmd "$@" ;;
*) usage ;;
esac
