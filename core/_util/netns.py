"""Is this process in a network namespace whose only interface is loopback?

Why: Ray 2.60's gRPC servers listen on every interface whatever node address is given
(measured with ``ss -ltnp``), and liedar's rule is that servers it starts listen on
loopback only. Inside a private network namespace (``unshare -n``, see
scripts/isolated.sh) every interface *is* loopback, so a local Ray cluster started there is
reachable from this machine's own processes only. `liedar.models.distributed` refuses to
start a local cluster anywhere else, and the test suite runs inside such a namespace.
"""

from __future__ import annotations


def loopback_only() -> bool:
    """True when every network interface of this process's namespace is ``lo``.

    Reads ``/proc/self/net/dev``, which follows the process's network namespace (``/sys/class/net``
    shows the namespace sysfs was mounted in, i.e. the host's)."""
    try:
        lines = open("/proc/self/net/dev", encoding="ascii").read().splitlines()[2:]
    except OSError:
        return False
    names = [line.split(":", 1)[0].strip() for line in lines if ":" in line]
    return bool(names) and all(n == "lo" for n in names)


ISOLATE_HINT = (
    "run it in a private network namespace, e.g. `sudo unshare -n sh -c 'ip link set lo up && exec liedar ...'` "
    "(scripts/isolated.sh does this), or pass --ray ADDRESS of a Ray cluster you run yourself"
)

__all__ = ["ISOLATE_HINT", "loopback_only"]
