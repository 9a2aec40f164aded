"""The console in a real browser: Debian's headless Chromium driven by selenium's chromedriver, against `agentkb
serve` on a free loopback port with a demo data dir of its own. Nothing downloads a browser: without
/usr/bin/chromium, /usr/bin/chromedriver or selenium every test here skips and says which is missing."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
CHROMIUM = os.environ.get("AGENTKB_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("AGENTKB_CHROMEDRIVER", "/usr/bin/chromedriver")
SCREENSHOTS = Path(os.environ.get("AGENTKB_CONSOLE_SCREENSHOTS", REPO / ".build" / "console-screenshots"))


def missing_browser() -> str | None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not shutil.which(p)]
    if importlib.util.find_spec("selenium") is None:
        missing.append("the selenium package (pip install -e '.[dev]')")
    if missing:
        return ("no browser for the console tests: missing " + ", ".join(missing) +
                " (apt-get install chromium chromium-driver; `make dev-install` does it as root)")
    return None


def _env(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "AGENTKB_DATA_DIR": str(data_dir), "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "PYTHONPATH": os.pathsep.join([str(REPO / "functions"), str(REPO), os.environ.get("PYTHONPATH", "")])}


@pytest.fixture(scope="package")
def console_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    reason = missing_browser()
    if reason:
        pytest.skip(reason)
    env = _env(tmp_path_factory.mktemp("console"))
    demo = subprocess.run([sys.executable, "-m", "agentkb.cli.main", "demo"], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert demo.returncode == 0, demo.stderr
    key = re.search(r"export AGENTKB_KEY=(\S+)", demo.stdout).group(1)  # type: ignore[union-attr]
    proc = subprocess.Popen([sys.executable, "-m", "agentkb.cli.main", "serve", "--host", "127.0.0.1", "--port", "0"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        first = proc.stdout.readline()  # type: ignore[union-attr]
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)", first).group(1))  # type: ignore[union-attr]
        console_line = proc.stdout.readline()  # type: ignore[union-attr]
        yield {"base": f"http://127.0.0.1:{port}", "key": key, "workspace": "demo", "console_line": console_line}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="package")
def browser(console_server: dict[str, Any]) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1000", "--no-first-run", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.console_log = []  # every browser log entry of the run, read by the last test
    try:
        yield driver
    finally:
        driver.quit()


def call(server: dict[str, Any], method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """The API as a client other than the browser (an agent, or the test checking what the console did)."""
    request = urllib.request.Request(server["base"] + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None)
    request.add_header("Content-Type", "application/json")
    request.add_header("X-API-Key", server["key"])
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")
