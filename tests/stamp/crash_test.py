#!/usr/bin/python3
"""Kills `tsctl stamp` at every write step and at random moments, and checks
that the archive is then either the original or the complete new version, that
LibTorch (torch.jit.load) loads it with the right extra files and unchanged
tensors, and that the next stamp repairs what an interrupted one left.

Usage: crash_test.py TSCTL TESTDATA_DIR [--random N]
Needs Debian's python3-torch (run with /usr/bin/python3).
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import torch

TSCTL, TESTDATA = sys.argv[1], sys.argv[2]
RANDOM_RUNS = int(sys.argv[sys.argv.index("--random") + 1]) if "--random" in sys.argv else 20
BASE = os.path.join(TESTDATA, "traced_cnn.pt")
failures = []


def records(path):
    """name -> crc32 of every record, all CRCs verified by tsctl."""
    out = subprocess.run([TSCTL, "inspect", "--json", "--verify", path], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"inspect failed: {out.stderr.strip()}")
    info = json.loads(out.stdout)
    bad = [r["name"] for r in info["records"] if r["crc"] != "ok"]
    if bad:
        raise AssertionError(f"records failing CRC: {bad}")
    return {r["name"]: r["crc32"] for r in info["records"]}


def load(path, names):
    extra = {n: "" for n in names}
    m = torch.jit.load(path, _extra_files=extra)
    return m, extra


ORIGINAL_RECORDS = records(BASE)
ORIGINAL_STATE = torch.jit.load(BASE).state_dict()


def check_state(path, big_name, big_data, label):
    """The archive at `path` must be the original or the complete new one."""
    try:
        recs = records(path)
        root = os.path.commonprefix(list(recs))  # unused, names are root-less already
        new_names = {f"extra/{big_name}", "extra/producer_info.json"}
        if recs == ORIGINAL_RECORDS:
            state = "original"
        elif set(recs) == set(ORIGINAL_RECORDS) | new_names and all(
            recs[k] == v for k, v in ORIGINAL_RECORDS.items()
        ):
            state = "new"
        else:
            raise AssertionError(f"neither original nor new: {sorted(set(recs) ^ set(ORIGINAL_RECORDS))}")
        m, extra = load(path, [big_name, "producer_info.json"])
        if state == "new":
            if extra[big_name] != big_data:
                raise AssertionError("new archive: extra file content differs")
            json.loads(extra["producer_info.json"])
        elif extra[big_name] or extra["producer_info.json"]:
            raise AssertionError("original archive shows new extra files")
        for k, v in m.state_dict().items():
            if not torch.equal(v, ORIGINAL_STATE[k]):
                raise AssertionError(f"tensor {k} changed")
        return state
    except Exception as e:  # noqa: BLE001 - every failure is reported
        failures.append(f"{label}: {e}")
        return "broken"


def stamp_cmd(path, big_path, big_name, extra_args=()):
    return [TSCTL, "stamp", path, "--file", f"{big_name}={big_path}", "--set", "run=1", *extra_args]


def main():
    work = tempfile.mkdtemp(prefix="tsctl-crash-")
    try:
        big_name = "payload.bin"
        big_path = os.path.join(work, big_name)
        rng = random.Random(1234)
        big_data = bytes(rng.getrandbits(8) for _ in range(3 << 20))  # 3 MiB: several write chunks
        with open(big_path, "wb") as f:
            f.write(big_data)

        # 1. Deterministic: kill at write step 1, 2, ... until a run completes.
        states = {}
        step = 1
        while True:
            target = os.path.join(work, "a", "model.pt")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy(BASE, target)
            env = dict(os.environ, TSCTL_FAULT_KILL_AT=str(step))
            rc = subprocess.run(stamp_cmd(target, big_path, big_name), env=env, capture_output=True).returncode
            state = check_state(target, big_name, big_data, f"kill at step {step}")
            states[step] = (rc, state)
            if rc == -signal.SIGKILL:
                if state == "new" and step < 3:
                    failures.append(f"step {step}: new version visible before the commit write")
                # The next stamp repairs and completes.
                rc2 = subprocess.run(stamp_cmd(target, big_path, big_name), capture_output=True)
                if rc2.returncode != 0 or check_state(target, big_name, big_data, f"repair after step {step}") != "new":
                    failures.append(f"repair after step {step} failed: {rc2.stderr.decode().strip()}")
                if len(os.listdir(os.path.dirname(target))) != 1:
                    failures.append(f"step {step}: files left beside the archive: {os.listdir(os.path.dirname(target))}")
            elif rc == 0:
                if state != "new":
                    failures.append(f"step {step}: finished but archive is {state}")
                break
            else:
                failures.append(f"step {step}: exit {rc}")
                break
            step += 1
            if step > 200:
                failures.append("more than 200 write steps?")
                break
        print(f"fault injection: {len(states)} kill points; states: "
              + ", ".join(f"{k}:{v[1]}" for k, v in sorted(states.items())))

        # 2. Random moments, in place and with --output.
        seen = {"original": 0, "new": 0, "broken": 0}
        for i in range(RANDOM_RUNS):
            d = os.path.join(work, f"r{i}")
            os.makedirs(d)
            target = os.path.join(d, "model.pt")
            shutil.copy(BASE, target)
            use_output = i % 2 == 1
            out = os.path.join(d, "out.pt")
            replacing = use_output and i % 4 == 3  # --output over an existing file
            if replacing:
                shutil.copy(BASE, out)
            cmd = stamp_cmd(target, big_path, big_name, ["--output", out] if use_output else [])
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, 0.03))
            p.send_signal(signal.SIGKILL)
            p.wait()
            if use_output:
                if records(target) != ORIGINAL_RECORDS:
                    failures.append(f"random {i}: --output changed the original")
                if os.path.exists(out):
                    seen[check_state(out, big_name, big_data, f"random {i} output")] += 1
                else:
                    seen["original"] += 1
                left = sorted(set(os.listdir(d)) - {"model.pt", "out.pt"})
                if replacing and left == ["out.pt.tsctl-tmp"]:
                    # A kill between link and rename: the name holds the complete new file.
                    if check_state(os.path.join(d, left[0]), big_name, big_data, f"random {i} tmp") != "new":
                        failures.append(f"random {i}: out.pt.tsctl-tmp is not the complete new archive")
                elif left:
                    # A new name is linked in directly: nothing may appear beside it.
                    failures.append(f"random {i}: files left: {left}")
            else:
                seen[check_state(target, big_name, big_data, f"random {i}")] += 1
        print(f"random kills: {RANDOM_RUNS} runs, states {seen}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print(f"{'FAILED' if failures else 'PASSED'}: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
