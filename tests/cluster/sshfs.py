"""sshfs.py - sshfs over loopback for the cluster suite: a private sshd on
127.0.0.1 (its own host key, key login as root, started as our child) and
sshfs mounts of local folders through it, each a "host" whose flock does
not reach the others.  Teardown unmounts and ends sshd by pid."""
import os
import socket
import subprocess
import time

from gluster import run


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sshd:
    def __init__(self, base):
        self.base = base
        self.proc = None
        self.mounts = []

    def start(self):
        b = self.base
        self.key = os.path.join(b, "id")
        run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
            os.path.join(b, "hostkey"))
        run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", self.key)
        with open(self.key + ".pub") as f, \
                open(os.path.join(b, "authorized_keys"), "w") as g:
            g.write(f.read())
        self.port = free_port()
        cfg = os.path.join(b, "sshd_config")
        with open(cfg, "w") as f:
            f.write("Port %d\nListenAddress 127.0.0.1\nHostKey %s\n"
                    "AuthorizedKeysFile %s\nPermitRootLogin "
                    "prohibit-password\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nUsePAM no\n"
                    "StrictModes no\nPidFile none\n"
                    "Subsystem sftp internal-sftp\n" % (
                        self.port, os.path.join(b, "hostkey"),
                        os.path.join(b, "authorized_keys")))
        os.makedirs("/run/sshd", exist_ok=True)  # privilege separation
        self.log = os.path.join(b, "sshd.log")
        self.proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", cfg,
                                      "-E", self.log])
        end = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, \
                "sshd exited: " + open(self.log).read()
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                return
            except OSError:
                assert time.monotonic() < end, "sshd did not listen in 30 s"
                time.sleep(0.1)

    def mount(self, folder, mnt):
        """folder (a local path) mounted at mnt through sshd."""
        os.makedirs(mnt, exist_ok=True)
        run("sshfs", "root@127.0.0.1:" + folder, mnt, "-p", str(self.port),
            "-o", "IdentityFile=%s,StrictHostKeyChecking=no,"
            "UserKnownHostsFile=/dev/null,LogLevel=ERROR" % self.key)
        self.mounts.append(mnt)
        return mnt

    def teardown(self):
        errors = []
        for mnt in self.mounts:
            if os.path.ismount(mnt):
                r = run("fusermount3", "-u", mnt, check=False)
                if r.returncode:
                    run("umount", "-l", mnt, check=False)
                    errors.append("fusermount3 -u %s: %s" % (
                        mnt, r.stderr.decode().strip()))
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return errors
