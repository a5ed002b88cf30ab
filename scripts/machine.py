"""The machine a benchmark ran on, as the scripts print it: the CPU model and the cores."""

import os


def machine():
    """`model name` of /proc/cpuinfo and the core count (`unknown` where there is none)."""
    model = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"
