"""A real browser for the site tests: headless Chromium from the system packages, driven through Selenium.

No browser is downloaded: Chromium and its driver come from the operating system (Debian: `apt install chromium
chromium-driver`; .ci/run installs them). `browser_missing()` says why none can be used here, or "".
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading

CHROMIUM = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
DRIVER = ("chromedriver",)


def _which(names) -> str | None:
    return next((p for p in (shutil.which(n) for n in names) if p), None)


def browser_missing() -> str:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (`make setup` installs the docs extra)"
    if _which(CHROMIUM) is None or _which(DRIVER) is None:
        return "no Chromium and chromedriver on the PATH (Debian: apt install chromium chromium-driver)"
    return ""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(directory: str):
    """A static file server on a free local port for the built site; yields its base URL."""
    handler = functools.partial(_Quiet, directory=directory)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}/"
    finally:
        srv.shutdown()
        srv.server_close()


class Browser:
    """Headless Chromium: open a page, run JavaScript in it, save a screenshot."""

    def __init__(self, width: int = 1400, height: int = 1000):
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service

        o = Options()
        o.binary_location = _which(CHROMIUM)
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  f"--window-size={width},{height}", "--lang=en-US"):
            o.add_argument(a)
        self.driver = webdriver.Chrome(service=Service(_which(DRIVER)), options=o)
        self.driver.set_page_load_timeout(60)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.driver.quit()

    def open(self, url: str) -> None:
        self.driver.get(url)
        # wait until every image has finished (loaded or failed)
        for _ in range(100):
            if self.js("return Array.from(document.images).every(i => i.complete)"):
                break
            self.driver.implicitly_wait(0.05)

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    @property
    def url(self) -> str:
        return self.driver.current_url

    def screenshot(self, path: str) -> str:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.driver.save_screenshot(path)
        return path
