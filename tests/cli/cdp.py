"""A small Chrome DevTools Protocol client for headless Chromium, standard
library only: Chromium runs with --remote-debugging-pipe and reads the
protocol's JSON messages, each ended by a NUL byte, on its file descriptor 3
and writes its answers and events on descriptor 4. One Chromium serves many
pages, one after the other, in one tab.

    with Chromium() as browser:
        tab = Tab(browser)
        page = tab.check("report.html", ["summary", "modules"])
        page.seconds, page.requests, page.console, page.problems()

or, for one page in a Chromium of its own, check_page("report.html", [...]).

The network is cut off as report_browser_test.py needs it: every host
resolves to nothing, the proxy is a closed port, and Chromium's own
background traffic is off, so a page that fetches anything gets an error and
the request is still seen (Network.requestWillBeSent).
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

OFFLINE = ["--headless=new", "--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--proxy-server=http://127.0.0.1:9", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-extensions", "--disable-default-apps", "--no-first-run",
           "--no-default-browser-check", "--mute-audio", "--hide-scrollbars"]

# The DOM checks, run in the page: which of the ids are missing, how many
# shapes and texts the SVG charts hold, whether the inline script ran (it
# shows the search tools, hidden in the HTML).
_DOM_CHECKS = """(() => {
  const ids = %s;
  const tools = document.getElementById("tools");
  return JSON.stringify({
    missing: ids.filter(i => !document.getElementById(i)),
    svg_nodes: document.querySelectorAll("svg rect, svg text, svg path, svg circle, svg line, svg polyline").length,
    script_ran: !!tools && !tools.hidden,
    too_wide: document.documentElement.scrollWidth > document.documentElement.clientWidth,
    title: document.title});
})()"""


def find_chromium():
    """The path of Debian's chromium (or chromium-browser), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class CdpError(Exception):
    """A protocol error, a timeout, or Chromium gone."""


class Chromium:
    """One headless Chromium process driven over --remote-debugging-pipe.
    Start it before any thread (it is started with a preexec_fn). Raises
    CdpError if it cannot be started."""

    def __init__(self, binary=None, args=(), timeout=30):
        binary = binary or find_chromium()
        if not binary:
            raise CdpError("chromium is not installed")
        self._profile = tempfile.mkdtemp(prefix="cdp-profile-")
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()
        # Copies above 10, so that putting them on 3 and 4 in the child
        # cannot overwrite one with the other; all of them close on exec.
        child_in = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD_CLOEXEC, 10)

        def on_3_and_4():
            os.dup2(child_in, 3)  # inheritable: these two stay open on exec
            os.dup2(child_out, 4)

        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [binary, *OFFLINE, "--remote-debugging-pipe", "--user-data-dir=" + self._profile, *args, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr, close_fds=False,
            preexec_fn=on_3_and_4)
        for fd in (to_chrome_r, from_chrome_w, child_in, child_out):
            os.close(fd)
        self._write, self._read = to_chrome_w, from_chrome_r
        self._buffer = b""
        self._next_id = 0
        self.events = []  # (sessionId, method, params) not yet taken
        try:
            self.call("Browser.getVersion", timeout=timeout)
        except CdpError:
            self.close()
            raise

    def _receive(self, deadline):
        """The next message, waiting at most until `deadline`."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise CdpError("no answer from Chromium in time")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise CdpError("Chromium closed the pipe: " + self.stderr()[-500:])
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, timeout=30):
        """Sends one command and returns its result; events that arrive
        meanwhile are kept in self.events. Raises CdpError on an error answer."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._write, data):]
        deadline = time.monotonic() + timeout
        while True:
            answer = self._receive(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise CdpError("%s: %s" % (method, answer["error"].get("message")))
                return answer.get("result", {})
            if "method" in answer:
                self.events.append((answer.get("sessionId"), answer["method"], answer.get("params", {})))

    def wait_for(self, method, session=None, timeout=30):
        """Reads events until `method` arrives (for `session`); returns its
        params. Every event read stays in self.events."""
        deadline = time.monotonic() + timeout
        for s, m, p in self.events:
            if m == method and s == session:
                return p
        while True:
            answer = self._receive(deadline)
            if "method" in answer:
                event = (answer.get("sessionId"), answer["method"], answer.get("params", {}))
                self.events.append(event)
                if event[0] == session and event[1] == method:
                    return event[2]

    def stderr(self):
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def close(self):
        """Ends Chromium (Browser.close, then a kill if it lingers)."""
        if self.proc.poll() is None:
            try:
                self.call("Browser.close", timeout=5)
            except (CdpError, OSError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._write, self._read):
            try:
                os.close(fd)
            except OSError:
                pass
        self._stderr.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class PageCheck:
    """What one page load showed: seconds until the load event, the URLs it
    requested (not its own file: URL, not data:), its console messages and
    exceptions, and the DOM checks (missing ids, SVG nodes, script ran, and
    with script whether the page is wider than the window)."""

    def __init__(self, url, seconds, requests, console, dom):
        self.url, self.seconds, self.requests, self.console = url, seconds, requests, console
        self.missing, self.svg_nodes = dom["missing"], dom["svg_nodes"]
        self.script_ran, self.title = dom["script_ran"], dom["title"]
        self.too_wide = dom.get("too_wide", False)  # measured with script on only

    def problems(self, script=True):
        """Every fault, one line each: with script, the script must have run;
        without, the tools must have stayed hidden."""
        out = ["no section id=%s" % s for s in self.missing]
        if self.svg_nodes == 0:
            out.append("the SVG charts have no nodes")
        if script and not self.script_ran:
            out.append("the inline script did not run (the tools are still hidden)")
        if not script and self.script_ran:
            out.append("script disabled, yet the tools are shown")
        if self.too_wide:
            out.append("the page is wider than the window: something long is not wrapped")
        return out + ["console: " + c[:200] for c in self.console] + ["request: " + u for u in self.requests]


def _console_line(method, p):
    if method == "Runtime.consoleAPICalled":
        args = " ".join(str(a.get("value", a.get("description", a.get("type")))) for a in p.get("args", []))
        return "console.%s: %s" % (p.get("type"), args)
    if method == "Runtime.exceptionThrown":
        d = p.get("exceptionDetails", {})
        return "exception: %s" % (d.get("exception", {}).get("description") or d.get("text"))
    e = p.get("entry", {})
    return "%s %s: %s%s" % (e.get("source"), e.get("level"), e.get("text"), " (%s)" % e["url"] if e.get("url") else "")


class Tab:
    """One tab of `browser`, its viewport width x height, with the Page,
    Runtime, Log and Network domains on."""

    def __init__(self, browser, width=1200, height=2000):
        self.browser = browser
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self._script = True

    def call(self, method, params=None, timeout=30):
        return self.browser.call(method, params, self.session, timeout)

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (by value)."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise CdpError("evaluate: %s" % r["exceptionDetails"].get("text"))
        return r["result"].get("value")

    def load(self, path_or_url, script=True, timeout=60):
        """Navigates to a page (a path or a URL), with script on or off, and
        waits for its load event; returns (seconds from the navigation to the
        load event, the page's URL). Raises CdpError if it does not load."""
        url = path_or_url if ":" in path_or_url.split("/")[0] else "file://" + os.path.abspath(path_or_url)
        if script != self._script:
            self.call("Emulation.setScriptExecutionDisabled", {"value": not script})
            self._script = script
        self.browser.events = [e for e in self.browser.events if e[0] != self.session]
        start = time.monotonic()
        answer = self.call("Page.navigate", {"url": url}, timeout)
        if answer.get("errorText"):
            raise CdpError("%s: %s" % (url, answer["errorText"]))
        self.browser.wait_for("Page.loadEventFired", self.session, timeout)
        seconds = time.monotonic() - start
        return seconds, url

    def _collect(self, url):
        """Requests and console lines among this tab's events so far."""
        requests, console = [], []
        for s, m, p in self.browser.events:
            if s != self.session:
                continue
            if m == "Network.requestWillBeSent":
                u = p.get("request", {}).get("url", "")
                if u != url and not u.startswith("data:") and u not in requests:
                    requests.append(u)
            elif m in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded"):
                console.append(_console_line(m, p))
        return requests, console

    def check(self, path_or_url, sections, script=True, timeout=60):
        """Loads a page and checks it: a PageCheck with the seconds until its
        load event, its requests, console messages and the DOM checks (by
        DOM.* when script is off, as Runtime.evaluate then runs nothing)."""
        seconds, url = self.load(path_or_url, script, timeout)
        if script:
            dom = json.loads(self.evaluate(_DOM_CHECKS % json.dumps(list(sections))))
        else:
            dom = self._dom_without_script(sections)
        requests, console = self._collect(url)
        return PageCheck(url, seconds, requests, console, dom)

    def _dom_without_script(self, sections):
        root = self.call("DOM.getDocument", {"depth": 0})["root"]["nodeId"]

        def count(selector):
            return len(self.call("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"])

        tools = self.call("DOM.querySelector", {"nodeId": root, "selector": "#tools:not([hidden])"})["nodeId"]
        return {"missing": [s for s in sections if count("#" + s) == 0],
                "svg_nodes": count("svg rect, svg text, svg path, svg circle, svg line, svg polyline"),
                "script_ran": tools != 0, "title": None}

    def screenshot(self, path):
        """Writes the viewport as a PNG to `path`."""
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))


def check_page(path_or_url, sections, script=True, binary=None, width=1200, height=2000):
    """Starts a Chromium, loads one page in a tab of width x height and
    returns its PageCheck (PageCheck.seconds: from the navigation to the load
    event, Chromium's start-up not included); ends Chromium."""
    with Chromium(binary) as browser:
        return Tab(browser, width, height).check(path_or_url, sections, script)
