"""The seccomp profile of every device: no mounts, no namespace changes, no kernel extension.

Kathará grants devices CAP_SYS_ADMIN, and FRR's daemons refuse to start without it in their
bounding set. Under Docker's default profile that capability lets any process in a device mount
file systems, which undoes the container: remounting /proc/sys read-write exposes host-wide
kernel settings (``kernel.core_pattern`` runs a program on the host), and a cgroup v1 mount
exposes the host's ``release_agent`` and the device's own memory and pids limits.

This profile replaces Docker's default: it allows by default and denies, with EPERM, the mount
family, namespace changes, kernel tracing and extension, keyrings and the calls Docker's
default profile denies to an unprivileged container. ``clone`` may not create namespaces, and
``clone3`` (whose flags a filter cannot read) answers ENOSYS so the C library falls back to
``clone``, as under Docker's own profile. Needs Docker 20.10 or later (``errnoRet``).
"""

from __future__ import annotations

import json
import platform
from functools import cache
from typing import Any

EPERM, ENOSYS = 1, 38
DENIED = (
    # file systems: any mount undoes the container's read-only and masked paths
    "mount", "umount", "umount2", "mount_setattr", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "pivot_root", "swapon", "swapoff", "quotactl",
    "quotactl_fd", "name_to_handle_at", "open_by_handle_at", "fanotify_init", "lookup_dcookie",
    # namespaces
    "unshare", "setns",
    # kernel tracing, extension and memory of other processes
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "init_module", "finit_module", "delete_module", "create_module",
    "get_kernel_syms", "query_module", "kexec_load", "kexec_file_load", "kcmp",
    "process_vm_readv", "process_vm_writev", "pidfd_getfd",
    # host-wide state: kernel log, keyrings, clocks, accounting, hardware
    "syslog", "keyctl", "add_key", "request_key", "reboot", "acct", "settimeofday",
    "clock_settime", "clock_adjtime", "iopl", "ioperm", "vhangup", "nfsservctl", "uselib",
    "ustat", "sysfs", "_sysctl", "vm86", "vm86old", "mbind", "set_mempolicy", "get_mempolicy",
    "move_pages", "migrate_pages",
)  # fmt: skip
NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
ARCHITECTURES = {
    "x86_64": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
    "aarch64": ["SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"],
}


def profile() -> dict[str, Any]:
    """The profile as Docker's API takes it."""
    deny_clone = [
        {
            "names": ["clone"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": EPERM,
            "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}],
        }
        for flag in NAMESPACE_FLAGS
    ]
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ARCHITECTURES.get(platform.machine(), []),
        "syscalls": [
            {"names": list(DENIED), "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM},
            {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": ENOSYS},
            *deny_clone,
        ],
    }


@cache
def security_opt() -> str:
    """The ``SecurityOpt`` entry that applies the profile to a container."""
    return "seccomp=" + json.dumps(profile(), separators=(",", ":"))
