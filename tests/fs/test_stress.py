"""A short run of stress.py (the concurrency stress of a real mount,
checked against a model) against the build's binaries: 8 workers for about
20 seconds must end with exit status 0.  `make stress` runs it longer."""
import os
import subprocess
import sys

from fsutil import ZRECORD, ZRECORDFS

SECONDS = 20


def test_stress_short_run():
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "stress.py")
    r = subprocess.run([sys.executable, script, "--seconds", str(SECONDS),
                        "--workers", "8", "--zrecordfs", ZRECORDFS,
                        "--zrecord", ZRECORD], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=SECONDS + 240)
    out = r.stdout.decode(errors="replace")
    print(out)
    verdict = [ln for ln in out.splitlines()
               if ln.startswith(("stress:", "FAIL", "  worker"))]
    assert r.returncode == 0, "\n".join(verdict[:40] + out.splitlines()[-1:])
    assert out.rstrip().endswith(" 0 failed")
