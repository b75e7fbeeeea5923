#!/usr/bin/env python3
"""Takes the README's screenshots of the chat page (docs/images/webui-light.png
and webui-dark.png): starts `skiff serve` on Qwen2.5-Coder-0.5B, asks for a
function in headless Chromium (a reply with a code block, greedy) and shoots the
page in the light and the dark theme (prefers-color-scheme, emulated). Run from
the repository root in the test venv, after scripts/build.sh and
scripts/fetch-models.sh:

    ~/.cache/skiff/test-venv/bin/python tools/webui_screenshots.py
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "server"))

from conftest import QWEN, Server, need  # noqa: E402
from webui_browser import chromium, missing_browser, open_page, send, set_settings, wait_reply  # noqa: E402

IMAGES = ROOT / "docs" / "images"
PROMPT = "Write a Python function that checks whether a string is a palindrome, with a short explanation."


def main():
    reason = missing_browser()
    if reason:
        sys.exit(reason)
    server = Server(need(QWEN), "-c", "4096", "--served-model-name", "qwen2.5-coder-0.5b")
    driver = chromium(1280, 800)
    try:
        open_page(driver, server.url + "/", model="qwen2.5-coder-0.5b")
        set_settings(driver, temperature=0, max_tokens=300)
        send(driver, PROMPT)
        wait_reply(driver, timeout=900)
        IMAGES.mkdir(parents=True, exist_ok=True)
        # Light from the top (the question, a code block), dark at the end (the reply's figures).
        for scheme, scroll in (("light", "0"), ("dark", "messages.scrollHeight")):
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                   {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            driver.execute_script(f"const messages = document.getElementById('messages'); messages.scrollTop = {scroll}")
            path = IMAGES / f"webui-{scheme}.png"
            driver.save_screenshot(str(path))
            print(path)
    finally:
        driver.quit()
        server.stop()


if __name__ == "__main__":
    main()
