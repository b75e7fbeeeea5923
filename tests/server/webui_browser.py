"""Driving the chat page in headless Chromium with selenium: for the tests
(test_webui.py) and the README's screenshots (tools/webui_screenshots.py).
Chromium and chromedriver are Debian's (scripts/install-deps.sh), selenium
comes from PyPI (scripts/setup-test-env.sh)."""
import shutil

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
SLOW = 120  # seconds: a reply on one thread of a busy machine


def missing_browser():
    """Why the browser cannot run here, or None."""
    missing = [name for name, path in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER)) if not path]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium")
    if missing:
        return f"{', '.join(missing)} missing: run scripts/install-deps.sh and scripts/setup-test-env.sh"
    return None


def chromium(width=1200, height=850):
    # Both paths given: selenium's driver manager would otherwise try the network.
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def wait_for(driver, condition, timeout=SLOW, message=""):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(), message)


def open_page(driver, url, model="qwen"):
    """The page with empty storage, once it shows the model's name."""
    driver.get(url)
    driver.execute_script("localStorage.clear()")
    driver.get(url)
    wait_for(driver, lambda: driver.find_element("id", "model-name").text == model, 60, "the model's name")


def set_settings(driver, **fields):
    driver.find_element("id", "open-settings").click()
    for name, value in fields.items():
        box = driver.find_element("id", "set-" + name)
        box.clear()
        box.send_keys(str(value))
    driver.find_element("id", "settings-save").click()
    wait_for(driver, lambda: not driver.find_element("id", "settings").is_displayed(), 5)


def idle(driver):
    return driver.execute_script("return document.getElementById('messages').getAttribute('aria-busy') !== 'true'")


def send(driver, text):
    from selenium.webdriver.common.keys import Keys

    box = driver.find_element("id", "prompt")
    box.send_keys(text)
    box.send_keys(Keys.ENTER)  # Enter sends


def wait_reply(driver, timeout=SLOW):
    wait_for(driver, lambda: idle(driver), timeout, "the reply to end")
