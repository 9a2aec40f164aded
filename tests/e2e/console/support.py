"""What the console's browser tests share: where the browser is, why it is missing, the API as another client."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's headless Chromium under selenium's chromedriver, logging every browser console entry; quit after."""
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
    try:
        yield driver
    finally:
        driver.quit()


def env_for(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "AGENTKB_DATA_DIR": str(data_dir), "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "PYTHONPATH": os.pathsep.join([str(REPO / "functions"), str(REPO), os.environ.get("PYTHONPATH", "")])}


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
