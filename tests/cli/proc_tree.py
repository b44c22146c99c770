"""A process's children and descendants, read from /proc/*/stat (no kernel
option needed, unlike /proc/PID/task/PID/children): for the tests that
look at what tsctl started (signals_test.py, fresh_image_test.py)."""
import os


def children_of(pid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    return out


def descendants(pid):
    found, todo = [], [pid]
    while todo:
        for c in children_of(todo.pop()):
            found.append(c)
            todo.append(c)
    return found
