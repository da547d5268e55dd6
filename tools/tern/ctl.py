"""`tern ctl`: managing a running system through `tern run`'s control socket.

`tern run` listens on a Unix socket, ctl.sock in its work directory, while QEMU runs
(ControlServer).  A client connects, writes one request, a hypervisor console command
(`list`, `pause rt`, ...) on one line, and reads JSON lines back until the socket closes:
the hypervisor's `tern-ctl` items, then one object with "ok" (true, or false and "reason").
The server types each request on the board's console as `@N COMMAND` and matches the
replies by that N (docs/management.md has the protocol, docs/design.md "Console protocol"
the hypervisor's side).  One request at a time: the console is one line.
"""

import json
import os
import re
import socket
import threading
import time
from pathlib import Path

from .errors import TernError, ToolError, show_path

SOCKET_NAME = "ctl.sock"
# The hypervisor's console keeps 255 characters a line; `@N ` (N up to 10 digits) comes first.
MAX_COMMAND = 240
# How long a request waits for the hypervisor's last reply line.
REPLY_TIMEOUT = 10.0
# Lines of `stats` that are not tern-ctl lines: the hypervisor's counters, as at power-off
# (tern-sched: a shared core's window entries and scheduling events, how late).
STATS_TAGS = ("tern-stats", "tern-sched", "tern-mem")
_PRINTABLE = re.compile(r"^[\x20-\x7e]*$")


class Refused(TernError):
    """The hypervisor (or tern run) refused a request: its reason is the message."""

    status = 1


class ControlServer:
    """tern run's side: the socket, and the requests in flight on the console.

    write(text) types on the board's console; feed(line) must see every serial line.
    """

    def __init__(self, path, write, timeout=REPLY_TIMEOUT):
        self.path = Path(path)
        self.write = write
        self.timeout = timeout
        self.sock = None
        self.thread = None
        self.closed = False
        self.one_at_a_time = threading.Lock()
        self.state = threading.Condition()
        self.seq = 0
        self.pending = None          # the request in flight: {"seq", "cmd", "items", "done"}
        self.gone = None             # why no reply can come any more (QEMU ended)

    def start(self):
        """Listen on the socket; False (and nothing served) if the path cannot be one."""
        if len(os.fsencode(self.path)) >= 107:   # sun_path's limit
            return False
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.bind(str(self.path))
            self.sock.listen(4)
        except OSError:
            self.sock.close()
            self.sock = None
            return False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()
        return True

    def close(self, why="the system is no longer running"):
        with self.state:
            self.gone = why
            self.state.notify_all()
        self.closed = True
        if self.sock:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()
            try:
                os.unlink(self.path)
            except OSError:
                pass
        if self.thread:
            self.thread.join(timeout=5)

    def feed(self, line):
        """A serial line: a reply to the request in flight, or nothing of ours."""
        tag, _, rest = line.partition(" ")
        with self.state:
            req = self.pending
            if req is None or req["done"]:
                return
            if tag == "tern-ctl":
                try:
                    reply = json.loads(rest)
                except ValueError:
                    return
                if not isinstance(reply, dict) or reply.get("seq") != req["seq"]:
                    return
                reply.pop("seq", None)
                reply.pop("cmd", None)
                if "ok" in reply:
                    req["final"] = reply
                    req["done"] = True
                    self.state.notify_all()
                else:
                    req["items"].append(reply)
            elif tag in STATS_TAGS and req["cmd"] == "stats":
                try:
                    req["items"].append({tag[len("tern-"):]: json.loads(rest)})
                except ValueError:
                    pass

    def request(self, command):
        """Forward one command; its items and the final object (ok, or ok false and why)."""
        command = command.strip()
        if not command or len(command) > MAX_COMMAND or not _PRINTABLE.match(command):
            return [], {"ok": False, "reason": f"not a console command (one line of printable "
                                               f"characters, at most {MAX_COMMAND}): {command!r}"}
        with self.one_at_a_time:
            with self.state:
                if self.gone:
                    return [], {"ok": False, "reason": self.gone}
                self.seq += 1
                req = {"seq": self.seq, "cmd": command.split()[0], "items": [], "done": False}
                self.pending = req
            try:
                self.write(f"@{req['seq']} {command}\r")
            except OSError as e:
                return [], {"ok": False, "reason": f"cannot type on the console: {e}"}
            deadline = time.monotonic() + self.timeout
            with self.state:
                while not req["done"] and not self.gone:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self.state.wait(left)
                self.pending = None
                if req["done"]:
                    return req["items"], req["final"]
                if self.gone:
                    return [], {"ok": False, "reason": self.gone}
            return [], {"ok": False, "reason": f"the hypervisor did not answer {command!r} "
                                               f"within {self.timeout:g} s"}

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            try:
                conn.settimeout(self.timeout)
                data = b""
                while b"\n" not in data and len(data) < 4096:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                command = data.split(b"\n", 1)[0].decode("utf-8", "replace")
                items, final = self.request(command)
                out = "".join(json.dumps(item) + "\n" for item in items) + json.dumps(final) + "\n"
                conn.sendall(out.encode())
            except OSError:
                pass


# ---- the client: tern ctl ----

def find_socket(workdir=None, run_dir=None):
    """The control socket of `workdir`, or of the newest `tern run` under run_dir."""
    if workdir is not None:
        path = Path(workdir) / SOCKET_NAME
        if not path.exists():
            raise ToolError(f"{show_path(path)}: no control socket (is `tern run` running with "
                            f"--workdir {show_path(workdir)}?)")
        return path
    candidates = sorted(Path(run_dir).glob(f"*/{SOCKET_NAME}") if run_dir else [],
                        key=lambda p: p.stat().st_mtime if p.exists() else 0, reverse=True)
    if not candidates:
        raise ToolError(f"no running system: no {SOCKET_NAME} under {show_path(run_dir)} "
                        f"(start one with `tern run`, or pass --workdir)")
    return candidates[0]


def send(path, command, timeout=REPLY_TIMEOUT + 5):
    """One request to the socket at `path`: (items, final)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        try:
            sock.connect(str(path))
        except OSError as e:
            raise ToolError(f"{show_path(path)}: cannot connect ({(e.strerror or str(e)).lower()}"
                            f"; has `tern run` ended?)") from None
        sock.sendall(command.encode() + b"\n")
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        raise ToolError(f"{show_path(path)}: no answer within {timeout:g} s") from None
    finally:
        sock.close()
    lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    if not lines or "ok" not in lines[-1]:
        raise ToolError(f"{show_path(path)}: the answer ended early")
    return lines[:-1], lines[-1]


def command_line(args):
    """The console command for parsed `tern ctl` arguments."""
    words = [args.ctl_command]
    for name in ("partition", "pool_name", "vcpu", "cpu", "pool"):
        value = getattr(args, name, None)
        if value is not None:
            words.append(str(value))
    for flag, name in (("--budget", "budget"), ("--period", "period"), ("--weight", "weight"),
                       ("--cap", "cap"), ("--major-frame", "major_frame")):
        value = getattr(args, name, None)
        if value is not None:
            words += [flag, str(value)]
    for window in getattr(args, "window", None) or ():
        words += ["--window", window]
    return " ".join(words)


def _table(headers, rows, right=()):
    widths = [max([len(h)] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers)]

    def fmt(cells):
        return " ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                        for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([fmt(headers)] + [fmt(r) for r in rows])


def _cpus(cpus):
    return ",".join(str(c) for c in cpus) if cpus else "-"


def format_reply(command, items):
    """What `tern ctl` prints for a successful command, as `xl` would (empty: nothing)."""
    if command == "list":
        rows = [(i["partition"], i["id"], i["mem_mib"], i["vcpus"], i["state"], i["restarts"],
                 _cpus(i["cpus"]), i["pool"] or "-") for i in items]
        return _table(("Name", "ID", "Mem", "VCPUs", "State", "Restarts", "CPUs", "Pool"), rows,
                      right=(1, 2, 3, 5))
    if command == "vcpu-list":
        def state(i):
            if i["paused"]:
                return "paused"
            if i["power"] == "on" and i.get("sched") in ("runnable", "blocked"):
                return i["sched"]  # on a shared core: waiting for its turn, or for an interrupt
            return {"on": "running", "on_pending": "starting"}.get(i["power"], i["power"])
        rows = [(i["partition"], i["id"], i["vcpu"], i["cpu"], state(i), _cpus(i["affinity"]))
                for i in items]
        return _table(("Name", "ID", "VCPU", "CPU", "State", "Affinity"), rows, right=(1, 2, 3))
    if command == "pool-list":
        rows = [(i["pool"] or "-", i["scheduler"], _cpus(i["cpus"]), ",".join(i["partitions"]))
                for i in items]
        return _table(("Name", "Sched", "CPUs", "Partitions"), rows)
    if command == "stats":
        out = []
        for item in items:
            if "stats" in item:
                s = dict(item["stats"])
                head = f"{s.pop('partition')}: {s.pop('state')}, {s.pop('restarts')} restarts"
                counters = " ".join(f"{k}={v}" for k, v in s.items() if v)
                out.append(f"{head}" + (f"\n  {counters}" if counters else ""))
            elif "sched" in item:
                c = item["sched"]
                w, e = c["window_entry"], c["event_arrival"]
                out.append(f"core {c['cpu']} ({c['scheduler']}): window entries {w['count']}, "
                           f"{w['min']}-{w['max']} ticks after the boundary; scheduling events "
                           f"{e['count']}, {e['min']}-{e['max']} ticks after the deadline")
            elif "mem" in item:
                m = item["mem"]
                out.append(f"hypervisor tables: {m['table_pages_used']} of {m['table_pages']} "
                           f"pages")
        return "\n".join(out)
    return ""


def run(args, run_dir):
    """`tern ctl`: returns the exit status (a refusal raises Refused)."""
    path = find_socket(args.workdir, run_dir)
    command = command_line(args)
    items, final = send(path, command, timeout=args.timeout)
    if args.json:
        print(json.dumps({"command": command, **final, "items": items}, indent=1))
    if not final.get("ok"):
        raise Refused(final.get("reason") or "refused (no reason given)")
    if not args.json:
        text = format_reply(args.ctl_command, items)
        if text:
            print(text)
    return 0
