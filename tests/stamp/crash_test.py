#!/usr/bin/python3
"""Crash safety of `tsctl stamp` in place, checked with four ZIP readers.

After a kill at every write step, 100 kills at random moments, and every cut
point of the write sequence (power-loss simulation, below), each of these
readers must read either the original archive or the complete stamped one:
  - Python's zipfile: open + testzip (finds the end record by scanning
    backwards and shifts offsets by where it sits, the "concat" adjustment);
  - libzip (tests/stamp/libzip_read.c: reads every entry, CRCs checked);
  - Info-ZIP `unzip -t` (exit 0, no warning);
  - LibTorch: torch.jit.load with _extra_files, tensors compared;
and tsctl's own reader (inspect --verify). Then the next stamp must give a
file byte-identical to an uninterrupted stamp (no garbage left), and
`stamp --repair` must give back the original byte for byte.

Power-loss simulation: truncating the finished file at every byte past the
original size cannot work for any layout (a cut inside new data of more than
64 KiB leaves no end record where Python and libzip look), so the test models
what a power loss leaves of the actual write sequence (see the invariant in
lib/src/commands/stamp_write.cc): the extending write of the "old view" is
durable with its size or not at all; each later write inside the file is cut
at any byte: the test cuts the end-record writes (steps 3 and 4) at every
byte, and the write of the new records and central directory (step 2) at
every byte of its first and last 64 bytes and of the records / central
directory boundary plus 32 to 256 evenly spaced cuts (every byte of a 3 MiB
write would take hours); the writes between two syncs also land out of
order (the central directory without the records), and the truncation is
atomic. The sequence is derived from the pre-commit file (a kill just before
the truncation) and the finished one, and checked against them.

Usage: crash_test.py TSCTL TESTDATA_DIR LIBZIP_READ [--random N]
Needs Debian's python3-torch (run with /usr/bin/python3) and unzip.
"""
import io
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

import torch

TSCTL, TESTDATA, LIBZIP_READ = sys.argv[1], sys.argv[2], sys.argv[3]
RANDOM_RUNS = int(sys.argv[sys.argv.index("--random") + 1]) if "--random" in sys.argv else 100
BASE = os.path.join(TESTDATA, "traced_cnn.pt")
failures = []


def read_python(path):
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
        if bad is not None:
            raise AssertionError(f"zipfile: bad CRC in {bad}")
        return {i.filename: i.CRC for i in z.infolist()}


def read_libzip(path):
    p = subprocess.run([LIBZIP_READ, path], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(p.stderr.strip())
    out = {}
    for line in p.stdout.splitlines():
        crc, _size, name = line.split(" ", 2)
        out[name] = int(crc, 16)
    return out


def read_unzip(path):
    """Names unzip -t tested and found OK (it checks every CRC)."""
    t = subprocess.run(["unzip", "-t", path], capture_output=True, text=True)
    if t.returncode != 0:
        raise AssertionError(f"unzip -t exit {t.returncode}: {(t.stdout + t.stderr).strip()[-200:]}")
    out = {}
    for line in t.stdout.splitlines():
        line = line.strip()
        if line.startswith("testing: ") and line.endswith(" OK"):
            out[line[len("testing: "):-3].strip()] = "OK"
    return out


def read_tsctl(path):
    import json
    p = subprocess.run([TSCTL, "inspect", "--json", "--verify", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"tsctl inspect: {p.stderr.strip()}")
    info = json.loads(p.stdout)
    bad = [r["name"] for r in info["records"] if r["crc"] != "ok"]
    if bad:
        raise AssertionError(f"tsctl: records failing CRC: {bad}")
    return {r["name"]: int(r["crc32"], 16) if isinstance(r["crc32"], str) else r["crc32"] for r in info["records"]}


READERS = {"zipfile": read_python, "libzip": read_libzip, "unzip": read_unzip, "tsctl": read_tsctl}


def load_torch(path, names):
    extra = {n: "" for n in names}
    m = torch.jit.load(path, _extra_files=extra)
    return {k: v.clone() for k, v in m.state_dict().items()}, {k: v for k, v in extra.items()}


class Versions:
    """What each reader sees in the original and in the stamped archive."""

    def __init__(self, original, stamped, extra_names):
        self.extra_names = extra_names
        self.maps = {label: {r: fn(p) for r, fn in READERS.items()} for label, p in
                     (("original", original), ("new", stamped))}
        self.torch = {"original": load_torch(original, extra_names), "new": load_torch(stamped, extra_names)}
        for r in READERS:
            if self.maps["original"][r] == self.maps["new"][r]:
                raise SystemExit(f"setup: {r} sees no difference between the versions")

    def classify(self, path, label):
        """Each reader must see 'original' or 'new'. Returns reader -> state."""
        seen = {}
        for r, fn in READERS.items():
            try:
                got = fn(path)
            except Exception as e:  # noqa: BLE001 - every failure is reported
                failures.append(f"{label}: {r}: {str(e)[:160]}")
                seen[r] = "broken"
                continue
            state = next((v for v in self.maps if self.maps[v][r] == got), None)
            if state is None:
                failures.append(f"{label}: {r} reads neither version: {sorted(set(got) ^ set(self.maps['original'][r]))[:4]}")
                state = "broken"
            seen[r] = state
        try:
            state_dict, extra = load_torch(path, self.extra_names)
            state = next((v for v, (sd, ex) in self.torch.items() if ex == extra), None)
            if state is None:
                raise AssertionError("extra files match neither version")
            for k, v in state_dict.items():
                if not torch.equal(v, self.torch[state][0][k]):
                    raise AssertionError(f"tensor {k} changed")
            seen["LibTorch"] = state
        except Exception as e:  # noqa: BLE001
            failures.append(f"{label}: LibTorch: {str(e).strip().splitlines()[-1][:160] if str(e).strip() else e!r}")
            seen["LibTorch"] = "broken"
        return seen


PAGE = 4096  # the smallest page size Linux uses (stamp_write.cc's kPage)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, **kw)


def end_of_central(data):
    """(central directory offset, end of the central directory = start of the end records)."""
    eocd = data.rfind(b"PK\x05\x06")
    _, _, _, _, _, cd_size, cd_off, _ = struct.unpack("<IHHHHIIH", data[eocd:eocd + 22])
    if data[eocd - 20:eocd - 16] == b"PK\x06\x07":  # ZIP64 locator: PyTorch always writes one
        z64 = struct.unpack("<Q", data[eocd - 12:eocd - 4])[0]
        cd_size, cd_off = struct.unpack("<QQ", data[z64 + 40:z64 + 56])
    return cd_off, cd_off + cd_size


class Scenario:
    """One stamp command on one original archive."""

    def __init__(self, work, name, original, args, extra_names):
        self.work, self.name, self.args = os.path.join(work, name), name, args
        os.makedirs(self.work)
        self.original = os.path.join(self.work, "original.pt")
        shutil.copy(original, self.original)
        self.reference = os.path.join(self.work, "reference.pt")
        shutil.copy(original, self.reference)
        started = time.monotonic()
        p = run([TSCTL, "stamp", self.reference, *args])
        self.duration = time.monotonic() - started  # spreads the random kills over a run
        if p.returncode != 0:
            raise SystemExit(f"setup {name}: {p.stderr.decode().strip()}")
        self.O = open(self.original, "rb").read()
        self.F = open(self.reference, "rb").read()
        # What an uninterrupted --output run writes: not the in-place result
        # byte for byte (in place keeps the original's bytes and layout
        # before its new tail; a copy is laid out afresh).
        copied = os.path.join(self.work, "reference_output.pt")
        p = run([TSCTL, "stamp", self.original, *args, "--output", copied])
        if p.returncode != 0:
            raise SystemExit(f"setup {name} --output: {p.stderr.decode().strip()}")
        self.F_output = open(copied, "rb").read()
        os.remove(copied)
        self.versions = Versions(self.original, self.reference, extra_names)
        self.n = 0

    def target(self, data=None):
        self.n += 1
        d = os.path.join(self.work, f"t{self.n}")
        os.makedirs(d)
        path = os.path.join(d, "model.pt")
        if data is None:
            shutil.copy(self.original, path)
        else:
            with open(path, "wb") as f:
                f.write(data)
        return path

    def check(self, path, label):
        """The set of states the readers saw."""
        return set(self.check_each(path, label).values())

    def check_each(self, path, label):
        return self.versions.classify(path, f"{self.name}: {label}")

    def check_recovery(self, path, label):
        """--repair gives the original back (or keeps a finished stamp); the next stamp gives the reference."""
        state = open(path, "rb").read()
        repaired = self.target(state)
        p = run([TSCTL, "stamp", "--repair", repaired])
        got = open(repaired, "rb").read()
        if p.returncode != 0 or got not in (self.O, self.F) or (state == self.F and got != self.F):
            failures.append(f"{self.name}: {label}: --repair gave neither the original nor the stamped file "
                            f"(exit {p.returncode}: {p.stderr.decode().strip()})")
        if state == self.F:
            return  # the stamp had committed: a new stamp would stamp again
        p = run([TSCTL, "stamp", path, *self.args])
        got = open(path, "rb").read()
        if p.returncode != 0 or got != self.F:
            failures.append(f"{self.name}: {label}: the next stamp did not give the uninterrupted result "
                            f"(exit {p.returncode}, {len(got)} vs {len(self.F)} bytes: {p.stderr.decode().strip()})")
        left = os.listdir(os.path.dirname(path))
        if left != ["model.pt"]:
            failures.append(f"{self.name}: {label}: files left beside the archive: {left}")
        shutil.rmtree(os.path.dirname(repaired))

    def kill_every_step(self):
        """TSCTL_FAULT_KILL_AT=1, 2, ...: returns the file left by each kill."""
        states, step = [], 1
        while step <= 200:
            path = self.target()
            env = dict(os.environ, TSCTL_FAULT_KILL_AT=str(step))
            rc = run([TSCTL, "stamp", path, *self.args], env=env).returncode
            each = self.check_each(path, f"kill at step {step}")
            seen = set(each.values())
            data = open(path, "rb").read()
            if rc == 0:
                if data != self.F:
                    failures.append(f"{self.name}: step {step}: finished but differs from the reference")
                break
            if rc != -signal.SIGKILL:
                failures.append(f"{self.name}: step {step}: exit {rc}")
                break
            if len(data) > len(self.F):
                # Before the commit, the readers that take the last end record see the original.
                early = [r for r in ("zipfile", "unzip", "tsctl", "LibTorch") if each.get(r) != "original"]
                if early:
                    failures.append(f"{self.name}: step {step}: before the commit {early} do not read the original")
            states.append((step, data, seen))
            self.check_recovery(path, f"after kill at step {step}")
            shutil.rmtree(os.path.dirname(path))
            step += 1
        print(f"{self.name}: {len(states)} kill points: " +
              ", ".join(f"{s}:{'/'.join(sorted(seen))}" for s, _, seen in states))
        return states

    def power_loss(self, states, samples):
        """Every cut point of the write sequence, derived from the pre-commit state."""
        O, F = self.O, self.F
        S, E = len(O), len(F)
        pre = [data for _, data, _ in states if len(data) > E]
        if not pre:
            failures.append(f"{self.name}: no kill left a pre-commit file")
            return
        P = pre[-1]  # the last kill before the truncation
        V = P[E:]
        old_eocd = O.rfind(b"PK\x05\x06")
        cleared = O[:old_eocd] + b"\0\0\0\0" + O[old_eocd + 4:]
        if P != cleared + F[S:] + V:
            failures.append(f"{self.name}: the pre-commit file is not [original, end signature cleared][new tail][old view]")
            return
        cd_off, end_off = end_of_central(F)
        region = F[S:end_off]  # step 2: the records, then the central directory
        # Every byte of its first and last 64 bytes and around the records /
        # central directory boundary, and `samples` cuts evenly spaced.
        offsets = sorted(k for k in set(range(0, min(64, len(region)))) |
                         set(range(max(0, len(region) - 64), len(region) + 1)) |
                         set(range(0, len(region), max(1, len(region) // samples))) |
                         {cd_off - S - 1, cd_off - S, cd_off - S + 1} if 0 <= k <= len(region))

        def cuts():
            # Generated one at a time: each is a whole file.
            hole = lambda n: b"\0" * n  # noqa: E731 - bytes not yet written read as zeros
            yield "extend", O + hole(E - S) + V
            for k in offsets:
                yield f"step 2 cut at {k}", O + region[:k] + hole(E - S - k) + V
            # Out of order within step 2: the central directory without the records.
            yield "step 2 central only", O + hole(cd_off - S) + F[cd_off:end_off] + hole(E - end_off) + V
            for j in range(E - end_off + 1):  # step 3: the new end record, every byte
                yield f"step 3 cut at {j}", O + F[S:end_off + j] + hole(E - end_off - j) + V
            for j in range(5):  # step 4: the old end record's signature, every byte
                yield f"step 4 cut at {j}", O[:old_eocd] + b"\0" * j + O[old_eocd + j:] + F[S:] + V
            yield "truncated", F

        counts, n, middle = {}, 0, None
        for label, data in cuts():
            path = self.target(data)
            seen = self.check(path, f"power loss, {label}")
            key = "/".join(sorted(seen))
            counts[key] = counts.get(key, 0) + 1
            n += 1
            if label == "step 3 cut at 0":
                middle = path
            else:
                shutil.rmtree(os.path.dirname(path))
        self.check_recovery(middle, "power loss before the new end record")
        print(f"{self.name}: power loss: {n} cut points (every byte of the end-record writes, "
              f"{len(offsets)} of the {len(region) + 1} of the record write); states {counts}")

    def view_placement(self, states):
        """The old view lies inside one page when it fits in one, else starts on a page
        (a kill cuts a write only between pages: see stamp_write.cc). Returns the
        pre-commit file and where its view starts."""
        pre = [data for _, data, _ in states if len(data) > len(self.F)]
        if not pre:
            failures.append(f"{self.name}: no kill left a pre-commit file")
            return None, 0
        P = pre[-1]
        at = P.rfind(b"TSCTLJ01")
        size = len(P) - at
        if at < len(self.F) or (at % PAGE + size > PAGE if size <= PAGE else at % PAGE != 0):
            failures.append(f"{self.name}: the old view ({size} bytes at {at}) is placed where a kill can tear it")
        return P, at

    def torn_views(self, states):
        """What a kill during the old view's write can leave when the view spans pages:
        the original, a hole, the view's first pages. Nothing reads it; --repair
        gives the original back, the next in-place stamp the stamped file,
        --output and --dry-run say what happened and write nothing."""
        P, at = self.view_placement(states)
        if P is None:
            return
        if len(P) - at <= PAGE:
            failures.append(f"{self.name}: the old view fits in one page: no torn view to test")
            return
        # Torn during step 1: the original, the hole, the view's first pages.
        P = self.O + b"\0" * (at - len(self.O)) + P[at:]
        cuts = list(range(at + PAGE, len(P), PAGE))
        outcomes = {"tsctl opens it": 0, "nothing opens it": 0}
        for cut in cuts:
            torn = P[:cut]
            label = f"view torn at page {(cut - at) // PAGE}"
            path = self.target(torn)
            p = run([TSCTL, "stamp", "--repair", "--dry-run", path])
            if p.returncode != 0 or open(path, "rb").read() != torn:
                failures.append(f"{self.name}: {label}: --repair --dry-run: exit {p.returncode} or the file changed")
            # --output reads the original inside the file (whether or not any
            # reader opens the file: the original's end record may be out of reach).
            out = os.path.join(os.path.dirname(path), "out.pt")
            p = run([TSCTL, "stamp", path, *self.args, "--output", out])
            if p.returncode != 0 or self.check(out, f"{label}: --output") != {"new"} or open(path, "rb").read() != torn:
                failures.append(f"{self.name}: {label}: --output did not give the stamped archive or changed the "
                                f"file (exit {p.returncode}: {p.stderr.decode().strip()[:200]})")
            opens = run([TSCTL, "inspect", path]).returncode == 0
            outcomes["tsctl opens it" if opens else "nothing opens it"] += 1
            p = run([TSCTL, "stamp", "--repair", path])
            if p.returncode != 0 or open(path, "rb").read() != self.O:
                failures.append(f"{self.name}: {label}: --repair did not give the original back "
                                f"(exit {p.returncode}: {p.stderr.decode().strip()[:200]})")
            path2 = self.target(torn)
            p = run([TSCTL, "stamp", path2, *self.args])
            if p.returncode != 0 or open(path2, "rb").read() != self.F:
                failures.append(f"{self.name}: {label}: the next stamp did not give the uninterrupted result "
                                f"(exit {p.returncode}: {p.stderr.decode().strip()[:200]})")
            shutil.rmtree(os.path.dirname(path))
            shutil.rmtree(os.path.dirname(path2))
        print(f"{self.name}: torn old view ({len(P) - at} bytes): {len(cuts)} page cuts repaired; {outcomes}")

    def random_kills(self, runs, rng):
        seen_counts = {}
        for i in range(runs):
            use_output = i % 2 == 1
            path = self.target()
            d = os.path.dirname(path)
            out = os.path.join(d, "out.pt")
            replacing = use_output and i % 4 == 3  # --output over an existing file
            if replacing:
                shutil.copy(self.original, out)
            cmd = [TSCTL, "stamp", path, *self.args] + (["--output", out] if use_output else [])
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, 1.2 * self.duration))
            p.send_signal(signal.SIGKILL)
            p.wait()
            if use_output:
                if open(path, "rb").read() != self.O:
                    failures.append(f"{self.name}: random {i}: --output changed the original")
                if os.path.exists(out):
                    seen = self.check(out, f"random {i} output")
                else:
                    seen = {"original"}
                left = sorted(set(os.listdir(d)) - {"model.pt", "out.pt"})
                if replacing and left == ["out.pt.tsctl-tmp"]:
                    # A kill between link and rename: the name holds the complete new file.
                    if open(os.path.join(d, left[0]), "rb").read() != self.F_output:
                        failures.append(f"{self.name}: random {i}: out.pt.tsctl-tmp is not the complete new archive")
                elif left:
                    failures.append(f"{self.name}: random {i}: files left: {left}")
            else:
                seen = self.check(path, f"random {i}")
                self.check_recovery(path, f"after random kill {i}")
            key = "/".join(sorted(seen))
            seen_counts[key] = seen_counts.get(key, 0) + 1
            shutil.rmtree(d)
        print(f"{self.name}: random kills: {runs} runs (half in place, half --output), states {seen_counts}")


def main():
    work = tempfile.mkdtemp(prefix="tsctl-crash-")
    try:
        rng = random.Random(1234)
        big_name = "payload.bin"
        big_path = os.path.join(work, big_name)
        with open(big_path, "wb") as f:
            f.write(bytes(rng.getrandbits(8) for _ in range(3 << 20)))  # 3 MiB: several write chunks
        names = [big_name, "producer_info.json"]

        # A large record added: the random kills land in every phase.
        big = Scenario(work, "add 3 MiB", BASE, ["--file", f"{big_name}={big_path}", "--set", "run=1", "--no-auto"], names)
        states = big.kill_every_step()
        big.view_placement(states)
        big.power_loss(states, samples=32)
        big.random_kills(RANDOM_RUNS, rng)

        # A small stamp: the record write densely sampled.
        small = Scenario(work, "set only", BASE, ["--set", "run=1", "--no-auto"], names)
        states = small.kill_every_step()
        small.view_placement(states)
        small.power_loss(states, samples=256)

        # An archive whose central directory is longer than a page: its old
        # view spans pages, and a kill can tear it between them.
        wide_base = os.path.join(work, "wide.pt")
        wide_files = []
        for i in range(60):
            name = f"note-{i:02d}-{'x' * 40}.txt"
            with open(os.path.join(work, name), "w") as f:
                f.write(f"note {i}\n")
            wide_files += ["--file", f"{name}={os.path.join(work, name)}"]
        p = run([TSCTL, "stamp", BASE, "--no-auto", "--output", wide_base, *wide_files])
        if p.returncode != 0:
            raise SystemExit(f"setup wide: {p.stderr.decode().strip()}")
        wide = Scenario(work, "wide central directory", wide_base, ["--set", "run=1", "--no-auto"], names)
        wide.torn_views(wide.kill_every_step())
        # ... and with 3 MiB added, the original's end record is out of every reader's reach.
        wide_big = Scenario(work, "wide central directory, 3 MiB added", wide_base,
                            ["--file", f"{big_name}={big_path}", "--set", "run=1", "--no-auto"], names)
        wide_big.torn_views(wide_big.kill_every_step())

        # Removal only: the new records span no more bytes than the old ones, so
        # libzip would prefer the old end record if it were left valid.
        removal = Scenario(work, "remove only", big.reference, ["--remove", big_name, "--no-auto"], names)
        removal.power_loss(removal.kill_every_step(), samples=64)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures[:60]:
        print("FAIL:", f)
    print(f"{'FAILED' if failures else 'PASSED'}: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
