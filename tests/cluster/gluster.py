"""gluster.py - a throwaway GlusterFS volume for the cluster suite: its own
glusterd, a one-brick volume in a temporary folder, and one FUSE client
mount per simulated host.  Every step has a time bound, and teardown undoes
whatever start got through, ending only the processes it started (by pid).
Only one volume can run per machine (glusterd listens on port 24007), so
start() holds a machine-wide lock file until teardown."""
import fcntl
import glob
import os
import signal
import subprocess
import time

LOCK = "/run/lock/zrecord-cluster-test.lock"
STEP_TIMEOUT = 60


def run(*cmd, timeout=STEP_TIMEOUT, check=True):
    r = subprocess.run(list(cmd), capture_output=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError("%s failed (%d): %s%s" % (
            " ".join(cmd), r.returncode, r.stdout.decode(),
            r.stderr.decode()))
    return r


def host_ip():
    ips = run("hostname", "-I").stdout.decode().split()
    assert ips, "hostname -I printed no address for the brick"
    return ips[0]


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def end_pid(pid, timeout=10.0):
    """SIGTERM, then SIGKILL after timeout; pid need not be our child."""
    if pid is None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


class Volume:
    """glusterd + volume `name` with its brick under base; mount(i) gives
    host i its own client mount."""

    def __init__(self, base):
        self.base = base
        self.name = "zrt%d" % os.getpid()
        self.ip = None
        self.lock_fd = None
        self.glusterd = None
        self.brick_pid = None
        self.created = self.started = False
        self.mounts = {}

    def start(self):
        self.lock_fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.lock_fd, fcntl.LOCK_EX)  # another run finishes
        assert not self._port_busy(), (
            "a glusterd not started by this suite already listens on port "
            "24007; stop it first")
        self.ip = host_ip()
        pidfile = os.path.join(self.base, "glusterd.pid")
        self.log = os.path.join(self.base, "glusterd.log")
        run("glusterd", "-p", pidfile, "--log-file=" + self.log)
        self.glusterd = read_pid(pidfile)
        assert self.glusterd, "glusterd wrote no pid file: see " + self.log
        self._wait(lambda: run("gluster", "--mode=script", "volume", "info",
                               check=False).returncode == 0,
                   "glusterd to answer")
        self.brick = os.path.join(self.base, "brick")
        os.makedirs(self.brick)
        run("gluster", "--mode=script", "volume", "create", self.name,
            "%s:%s" % (self.ip, self.brick), "force")
        self.created = True
        run("gluster", "--mode=script", "volume", "start", self.name)
        self.started = True
        self.brick_pid = self._brick_pid()

    def _port_busy(self):
        r = run("ss", "-Hltn", "sport = :24007", check=False)
        return bool(r.stdout.strip())

    def _brick_pid(self):
        for p in glob.glob("/var/run/gluster/vols/%s/*.pid" % self.name):
            return read_pid(p)
        return None

    @staticmethod
    def _wait(pred, what, timeout=STEP_TIMEOUT):
        end = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > end:
                raise AssertionError("timed out waiting for " + what)
            time.sleep(0.2)

    def mount(self, i):
        """Host i's client mount (made on first use)."""
        if i not in self.mounts:
            mnt = os.path.join(self.base, "h%d" % i)
            os.makedirs(mnt, exist_ok=True)
            self.mounts[i] = mnt
            run("mount", "-t", "glusterfs",
                "%s:/%s" % (self.ip, self.name), mnt)
            self._wait(lambda: os.path.ismount(mnt), "mount of " + mnt)
        return self.mounts[i]

    def brick_path(self, path):
        """The brick's copy of path (a path under one of the mounts): the
        server's view, past every client cache."""
        for mnt in self.mounts.values():
            if path.startswith(mnt + "/"):
                return os.path.join(self.brick, path[len(mnt) + 1:])
        raise AssertionError(path + " is on no client mount")

    def teardown(self):
        """Undoes start() and every mount; never raises, reports errors."""
        errors = []

        def step(*cmd):
            try:
                r = run(*cmd, check=False)
                if r.returncode:
                    errors.append("%s: %s" % (" ".join(cmd),
                                              r.stderr.decode().strip()))
            except subprocess.TimeoutExpired:
                errors.append("%s: timed out" % " ".join(cmd))

        for mnt in self.mounts.values():
            if os.path.ismount(mnt):
                step("umount", mnt)
            if os.path.ismount(mnt):
                step("umount", "-l", mnt)
        if self.started:
            step("gluster", "--mode=script", "volume", "stop", self.name,
                 "force")
        if self.created:
            step("gluster", "--mode=script", "volume", "delete", self.name)
        end_pid(self.brick_pid)
        end_pid(self.glusterd)
        if self.lock_fd is not None:
            os.close(self.lock_fd)
        return errors
