"""The console in a real browser: Debian's headless Chromium driven by selenium's chromedriver, against `agentkb
serve` on a free loopback port with a demo data dir of its own. Nothing downloads a browser: without
/usr/bin/chromium, /usr/bin/chromedriver or selenium every test here skips and says which is missing."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.console.support import chromium, env_for, missing_browser


@pytest.fixture(scope="package")
def console_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    reason = missing_browser()
    if reason:
        pytest.skip(reason)
    env = env_for(tmp_path_factory.mktemp("console"))
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
    with chromium() as driver:
        yield driver
