#!/usr/bin/env python3
"""Opens pages in Debian's headless chromium (through chromium-driver, from selenium) and prints what
a person sees there, as JSON: the tests of `offpeak dashboard` (Tests/EndToEndTests/DashboardBrowserTests)
and scripts/screenshots.py drive the real browser through it.

Reads a plan on stdin:
    {"resolve": {"evil.test": "127.0.0.1"},          # optional: names the browser resolves so
     "visits": [{"url": "http://...",                 #   (a DNS rebinding, played)
                 "texts": {"NAME": "CSS selector"},   # the visible text of each match
                 "contents": {"NAME": "CSS selector"},  # the text inside each match, shown or not
                                                        #   (an SVG <title>: a tooltip)
                 "styles": {"NAME": ["CSS selector", "property"]},  # the first match's computed style
                 "screenshot": "file.png", "element": "CSS selector"}]}  # optional: a picture
and prints one result per visit: the URL it ended at, the title, the body's visible text, an alert's
text (or null: none opened), the texts, the contents, the styles, and the browser's console messages (a script the
page's Content-Security-Policy blocked shows there).
"""
import json
import sys

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"


def browser(resolve=None, width=1200, height=900):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--hide-scrollbars", "--force-device-scale-factor=1"]:
        options.add_argument(argument)
    if resolve:
        rules = ",".join(f"MAP {name} {address}" for name, address in resolve.items())
        options.add_argument(f"--host-resolver-rules={rules}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def visit(driver, step):
    driver.get(step["url"])
    try:
        alert = driver.switch_to.alert.text
    except NoAlertPresentException:
        alert = None
    seen = {
        "url": driver.current_url,
        "title": driver.title,
        "alert": alert,
        "body": driver.find_element(By.TAG_NAME, "body").text if alert is None else "",
        "texts": {name: [element.text for element in driver.find_elements(By.CSS_SELECTOR, css)]
                  for name, css in step.get("texts", {}).items()},
        "contents": {name: [element.get_attribute("textContent") for element in driver.find_elements(By.CSS_SELECTOR, css)]
                     for name, css in step.get("contents", {}).items()},
        "styles": {},
        "console": [entry["message"] for entry in driver.get_log("browser")],
    }
    for name, (css, prop) in step.get("styles", {}).items():
        found = driver.find_elements(By.CSS_SELECTOR, css)
        seen["styles"][name] = found[0].value_of_css_property(prop) if found else None
    if "screenshot" in step:
        target = driver.find_element(By.CSS_SELECTOR, step["element"]) if "element" in step else None
        if target is not None:
            target.screenshot(step["screenshot"])
        else:
            driver.save_screenshot(step["screenshot"])
    return seen


def main():
    plan = json.load(sys.stdin)
    driver = browser(plan.get("resolve"))
    try:
        results = [visit(driver, step) for step in plan["visits"]]
    finally:
        driver.quit()
    json.dump(results, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
