"""Driving the console as a person does: open a page, fill labelled fields, press buttons, wait for what appears."""

from __future__ import annotations

from typing import Any

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.e2e.console.support import SCREENSHOTS

WAIT_S = 60  # an upper bound (shared, loaded machines) for the page to show what it must; never a measured duration


def wait_css(driver: Any, css: str) -> WebElement:
    return WebDriverWait(driver, WAIT_S).until(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))


def wait_text(driver: Any, css: str, text: str) -> WebElement:
    WebDriverWait(driver, WAIT_S).until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))
    return driver.find_element(By.CSS_SELECTOR, css)


LOADS = iter(range(1, 1_000_000))


def open_page(driver: Any, server: dict[str, Any], route: str) -> None:
    """A fresh load of the console at `route` (a query of its own: the same URL again would only move the hash)."""
    driver.get(f"{server['base']}/console/?load={next(LOADS)}#/{route}")
    WebDriverWait(driver, WAIT_S).until(lambda d: d.execute_script("return document.documentElement.dataset.ready"))


def button(scope: Any, label: str) -> WebElement:
    found: WebElement = scope.find_element(By.XPATH, f".//button[normalize-space()='{label}']")
    return found


def field(scope: Any, label: str) -> WebElement:
    """The control inside the <label> whose own text starts with `label`."""
    found: WebElement = scope.find_element(
        By.XPATH, f".//label[starts-with(normalize-space(), '{label}')]//*[self::input or self::select or "
                  "self::textarea]")
    return found


def shoot(driver: Any, name: str) -> None:
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


FOCUSABLE_JS = """
const all = [...document.querySelectorAll('a[href], button, input, select, textarea, summary')];
const shown = all.filter((el) => !el.disabled && el.offsetParent !== null && el.type !== 'hidden');
shown.forEach((el, i) => { el.dataset.kbd = String(i); });
return shown.map((el) => `${el.tagName.toLowerCase()}:${(el.textContent || el.getAttribute('aria-label') ||
  el.id || el.name || '').trim().slice(0, 40)}`);
"""


def tab_through(driver: Any) -> tuple[list[str], set[int]]:
    """Every visible action on the page, and those Tab reached from the top of the page."""
    actions: list[str] = driver.execute_script(FOCUSABLE_JS)
    driver.execute_script("document.activeElement && document.activeElement.blur(); window.focus();")
    ActionChains(driver).send_keys(Keys.TAB).perform()
    reached: set[int] = set()
    for _ in range(len(actions) + 5):
        index = driver.execute_script("const k = document.activeElement.dataset.kbd; return k === undefined ? null "
                                      ": Number(k)")
        if index is not None:
            reached.add(index)
        ActionChains(driver).send_keys(Keys.TAB).perform()
    return actions, reached
