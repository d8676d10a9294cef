"""What the OAuth end-to-end tests share: a real headless browser that signs in on the
server's development login, or at a company's OpenID provider (npm oidc-provider's
development pages: tests/support/oidc_provider.mjs), and answers the server's consent
page, a loopback callback server that receives the authorization response, and a
loopback HTTPS server that serves client ID metadata documents under a certificate made
for 127.0.0.1.

The browser is Debian's Chromium driven by its ChromeDriver through Selenium (no
browser download: Selenium Manager never runs, as the binary and the driver are
named). Nothing here listens anywhere but 127.0.0.1, and each piece stops with
`close()` (the callers close them in `finally` blocks and `with` statements).
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

CHROMIUM = os.environ.get("KFIN_CHROMIUM") or "/usr/lib/chromium/chromium"
CHROMEDRIVER = os.environ.get("KFIN_CHROMEDRIVER") or "/usr/bin/chromedriver"
CHROMIUM_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)

# The seeded demo owner (SPEC section 12): the person every test signs in as.
DEMO_OWNER_ID = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01"
# What the development login's button for the owner shows: the name and the e-mail.
DEMO_OWNER_SHOWN = "Ana Souza <ana.souza@"

# The server's consent page's approve button; the provider's login field and consent form
# (oidc-provider's development interactions).
CONSENT_APPROVE = "form[method=post][action='/authorize'] button[name=decision][value=approve]"
PROVIDER_LOGIN = "form[method=post] input[name=login]"
PROVIDER_CONSENT = "form[method=post] input[type=hidden][name=prompt][value=consent]"

# How long one page may take to come (the server answers at once; Chromium's first
# page takes a second or two).
PAGE_SECONDS = 20


class BrowserError(Exception):
    """The browser did not get through the sign-in: what it saw is in the message."""


@dataclass
class Visit:
    """What the browser went through for one authorization request."""

    login_shown: bool = False
    consent_shown: bool = False
    # The consent page's visible text (the client's name and host are checked on it).
    consent_text: str = ""
    # Where the browser ended: the client's redirect URI with the response.
    landed: str = ""


@dataclass
class ProviderVisit(Visit):
    """What the browser went through for one sign-in at the company's OpenID provider."""

    # The provider's login page was shown (and answered); its consent page was.
    provider_login: bool = False
    provider_consent: bool = False
    # The visible text of the page the browser ended on.
    text: str = ""


class Browser:
    """One headless Chromium for a test run (a fresh profile), shared by its flows."""

    def __init__(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="kfin-chromium-")
        options = Options()
        options.binary_location = CHROMIUM
        for arg in CHROMIUM_ARGS:
            options.add_argument(arg)
        # Chromium writes beside its profile too (~/.config, ~/.cache): all of it goes to
        # the scratch directory, removed by close().
        home = {
            "HOME": self.profile,
            "XDG_CONFIG_HOME": os.path.join(self.profile, "config"),
            "XDG_CACHE_HOME": os.path.join(self.profile, "cache"),
        }
        options.add_argument(f"--user-data-dir={os.path.join(self.profile, 'profile')}")
        service = Service(executable_path=CHROMEDRIVER, log_output=subprocess.DEVNULL, env={**os.environ, **home})
        try:
            self.driver = webdriver.Chrome(options=options, service=service)
        except Exception:
            shutil.rmtree(self.profile, ignore_errors=True)
            raise
        self.driver.set_page_load_timeout(PAGE_SECONDS)

    def close(self) -> None:
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def _page_text(self) -> str:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.TAG_NAME, "body").text

    def _approve(self, visit: Visit, wait: Any, seen: Any) -> None:
        """Approves on the server's consent page (keeping its text in `visit`)."""
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.common.by import By

        try:
            approve = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, CONSENT_APPROVE))[0]
        except TimeoutException:
            raise BrowserError(f"no consent page after signing in: {seen()}") from None
        visit.consent_shown = True
        visit.consent_text = self._page_text()
        approve.click()

    def sign_in_at_provider(self, url: str, login: str, until: str, fresh: bool = True) -> ProviderVisit:
        """Opens `url` (an authorization request, or a page of the server that starts a
        sign-in when there is no session) and answers what comes, in whatever order it
        comes: the provider's login page (`login` typed, any password), the provider's
        consent page, the server's consent page (approved); until the browser is at a
        URL that starts with `until` (the client's redirect URI, the page the sign-in
        resumes, or the server's callback, where a refusal is shown). `fresh`: no
        session anywhere first (cookies cleared); otherwise the provider or the server
        may remember the person and skip its pages."""
        from selenium.common.exceptions import TimeoutException, WebDriverException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        driver = self.driver
        visit = ProviderVisit()
        if fresh:
            driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        driver.get(url)
        # While a page gives way to the next, what is found on it may already be gone
        # (stale, or "does not belong to the document"): look again.
        wait = WebDriverWait(driver, PAGE_SECONDS, ignored_exceptions=(WebDriverException,))

        def gone(element: Any) -> bool:
            try:
                element.is_enabled()
                return False
            except WebDriverException:
                return True

        def seen() -> str:
            return f"{driver.current_url[:200]} — {self._page_text()[:400]!r}"

        def where(d: Any) -> tuple[str, Any] | None:
            if d.current_url.startswith(until):
                return "landed", None
            for name, selector in (
                ("provider login", PROVIDER_LOGIN),
                ("provider consent", PROVIDER_CONSENT),
                ("consent", CONSENT_APPROVE),
            ):
                found = d.find_elements(By.CSS_SELECTOR, selector)
                if found:
                    return name, found[0]
            return None

        for _ in range(6):
            try:
                step, element = wait.until(where)
            except TimeoutException:
                raise BrowserError(f"neither a sign-in page nor {until}: {seen()}") from None
            if step == "landed":
                visit.landed = driver.current_url
                visit.text = self._page_text()
                return visit
            if step == "provider login":
                visit.provider_login = True
                form = element.find_element(By.XPATH, "./ancestor::form")
                element.send_keys(login)
                form.find_element(By.CSS_SELECTOR, "input[name=password]").send_keys("any password")
                form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            elif step == "provider consent":
                visit.provider_consent = True
                element.find_element(By.XPATH, "./ancestor::form//button[@type='submit']").click()
            else:
                self._approve(visit, wait, seen)
            try:
                wait.until(lambda _: gone(element))
            except TimeoutException:
                raise BrowserError(f"the page did not change after the {step}: {seen()}") from None
        raise BrowserError(f"still not at {until} after six pages: {seen()}")

    def sign_in_and_approve(self, authorize_url: str, person_id: str = DEMO_OWNER_ID) -> Visit:
        """Opens `authorize_url` with no session (cookies cleared), signs in on the
        development login as `person_id` (the button of that person's form), approves
        on the consent page, and waits until the browser is at the request's
        `redirect_uri` (with the response in its query)."""
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        query = urllib.parse.parse_qs(urllib.parse.urlsplit(authorize_url).query)
        landing_prefix = (query.get("redirect_uri") or [""])[0]
        if not landing_prefix:
            raise BrowserError(f"the authorization request names no redirect_uri: {authorize_url[:300]}")
        driver = self.driver
        visit = Visit()
        driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        driver.get(authorize_url)
        wait = WebDriverWait(driver, PAGE_SECONDS)

        def seen() -> str:
            return f"{driver.current_url[:200]} — {driver.find_element(By.TAG_NAME, 'body').text[:400]!r}"

        try:
            button = wait.until(
                lambda d: d.find_elements(
                    By.XPATH,
                    "//form[@method='post' and @action='/oauth/login']"
                    f"[.//input[@type='hidden' and @name='user_id' and @value='{person_id}']]//button[@type='submit']",
                )
            )[0]
        except TimeoutException:
            raise BrowserError(f"no development login with a button for {person_id}: {seen()}") from None
        visit.login_shown = True
        if person_id == DEMO_OWNER_ID and DEMO_OWNER_SHOWN not in button.text:
            raise BrowserError(f"the demo owner's button does not show {DEMO_OWNER_SHOWN!r}: {button.text!r}")
        button.click()
        self._approve(visit, wait, seen)
        try:
            wait.until(lambda d: d.current_url.startswith(landing_prefix))
        except TimeoutException:
            raise BrowserError(f"the browser did not come back to {landing_prefix}: {seen()}") from None
        visit.landed = driver.current_url
        return visit


@dataclass
class Callback:
    """One authorization response: the query of the request the redirect URI got."""

    path: str
    params: dict[str, list[str]]

    def one(self, name: str) -> str | None:
        values = self.params.get(name) or []
        return values[0] if len(values) == 1 else None


class CallbackServer:
    """A client's redirect URI: `http://127.0.0.1:PORT/callback`, answering a small
    page and keeping each request's query for `wait()`."""

    def __init__(self, path: str = "/callback") -> None:
        received: list[Callback] = []
        arrived = threading.Condition()
        self._received = received
        self._arrived = arrived

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                url = urllib.parse.urlsplit(self.path)
                body = b"<!doctype html><title>done</title><p>You may close this window.</p>"
                self.send_response(200 if url.path == path else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                if url.path == path:
                    with arrived:
                        received.append(Callback(url.path, urllib.parse.parse_qs(url.query, keep_blank_values=True)))
                        arrived.notify_all()

            def log_message(self, *_: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}{path}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def wait(self, seconds: float = PAGE_SECONDS) -> Callback:
        """The next authorization response (the first not yet taken)."""
        deadline = time.monotonic() + seconds
        with self._arrived:
            while not self._received:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"nothing came to {self.url} within {seconds:.0f}s")
                self._arrived.wait(left)
            return self._received.pop(0)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "CallbackServer":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


class DocumentServer:
    """Client ID metadata documents over HTTPS on 127.0.0.1, with the certificate
    `cert`/`key` (made for IP:127.0.0.1); `documents` maps a path to its JSON. Each
    fetch is counted by path."""

    def __init__(self, cert: str, key: str, documents: dict[str, Any] | None = None) -> None:
        self.documents: dict[str, Any] = dict(documents or {})
        self.fetched: dict[str, int] = {}
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                document = owner.documents.get(self.path)
                owner.fetched[self.path] = owner.fetched.get(self.path, 0) + 1
                body = json.dumps(document).encode() if document is not None else b"{}"
                self.send_response(200 if document is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.origin = f"https://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return f"{self.origin}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "DocumentServer":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


def missing() -> str | None:
    """What this machine lacks to drive the browser, or None: Chromium and ChromeDriver
    of the same version (Debian's chromium and chromium-driver) and Selenium."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (apt-get install chromium chromium-driver; package {package})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "Selenium is not in the venv (scripts/ensure-tools.sh installs it)"
    versions = []
    for binary in (CHROMIUM, CHROMEDRIVER):
        try:
            out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"{binary} --version failed: {e}"
        found = [w for w in out.split() if w[:1].isdigit() and w.count(".") == 3]
        versions.append(found[0] if found else out.strip())
    if versions[0].split(".")[0] != versions[1].split(".")[0]:
        return f"Chromium {versions[0]} and ChromeDriver {versions[1]} are not the same version"
    return None


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--check"]:
        print("usage: oauth_browser.py --check   (says what is missing to drive the browser)", file=sys.stderr)
        sys.exit(2)
    why = missing()
    if why:
        print(why)
        sys.exit(1)
    print("headless browser ready")
