"""The chat page (src/server/webui) in a real browser: headless Chromium driven
by selenium against the real binary on Qwen2.5-Coder-0.5B. What the page shows
is checked against what /v1/chat/completions answers greedily for the same
conversation. Chromium and chromedriver come from scripts/install-deps.sh,
selenium from scripts/setup-test-env.sh; without them the browser tests skip
(fail in CI, where SKIFF_REQUIRE_REAL_MODELS is set).
"""
import http.client
import http.server
import json
import os
import re
import threading
import time
from pathlib import Path

import httpx
import pytest

from conftest import QWEN, STORIES, Server, need
from webui_browser import SLOW, chromium, idle, missing_browser, open_page, send, set_settings, wait_for, wait_reply

WEBUI = Path(__file__).resolve().parents[2] / "src" / "server" / "webui"


@pytest.fixture(scope="module")
def driver():
    reason = missing_browser()
    if reason:
        if os.environ.get("SKIFF_REQUIRE_REAL_MODELS"):
            pytest.fail(reason)
        pytest.skip(reason)
    browser = chromium()
    yield browser
    browser.quit()


def stored(driver):
    """The current conversation's messages as the page keeps them."""
    return driver.execute_script("""
        const all = JSON.parse(localStorage.getItem('skiff.conversations') || '[]');
        const id = JSON.parse(localStorage.getItem('skiff.current'));
        const c = all.find((c) => c.id === id);
        return c ? c.messages : null;""")


def turns(messages):
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def greedy(server, messages, **sampling):
    """The reply the API gives for this conversation at temperature 0."""
    r = server.post("/v1/chat/completions", {"messages": messages, "temperature": 0, **sampling})
    assert r.status_code == 200, r.text
    return r.json()["choices"][0]["message"]["content"]


def reply_texts(driver):
    return [e.text for e in driver.find_elements("css selector", ".message.assistant .body")]


@pytest.fixture
def qwen_page(driver, qwen):
    open_page(driver, qwen.url + "/")
    set_settings(driver, temperature=0, max_tokens=40)
    return driver


def test_streamed_reply_equals_the_api(qwen_page, qwen):
    driver = qwen_page
    # Every length the reply's text takes on screen while it streams.
    driver.execute_script("""
        window.seenLengths = [];
        new MutationObserver(() => {
          const replies = document.querySelectorAll('.message.assistant .body');
          if (replies.length) window.seenLengths.push(replies[replies.length - 1].textContent.length);
        }).observe(document.getElementById('messages'), {childList: true, subtree: true, characterData: true});""")
    send(driver, "Describe the sea in two sentences.")
    wait_reply(driver)
    messages = stored(driver)
    assert [m["role"] for m in messages] == ["user", "assistant"]
    answer = qwen.post("/v1/chat/completions", {"messages": turns(messages[:1]), "temperature": 0, "max_tokens": 40})
    expected = answer.json()["choices"][0]["message"]["content"]
    assert messages[1]["content"] == expected
    shown = reply_texts(driver)[-1]
    assert " ".join(shown.split())[:20] == " ".join(expected.split())[:20]
    lengths = sorted(set(driver.execute_script("return window.seenLengths")) - {0})
    assert len(lengths) >= 3, f"the reply did not stream: lengths seen {lengths}"
    stats = driver.find_element("css selector", ".message.assistant .stats").text
    tokens = answer.json()["usage"]["completion_tokens"]
    assert re.match(rf"^{tokens} tokens · [\d.]+ tok/s · first token [\d.]+ s( · cut at max_tokens)?$", stats), stats


def test_regenerate_and_edit_continue_from_the_turn(qwen_page, qwen):
    from selenium.webdriver.common.keys import Keys

    driver = qwen_page
    set_settings(driver, max_tokens=12)
    box = driver.find_element("id", "prompt")
    box.send_keys("Name a fruit.", Keys.SHIFT, Keys.ENTER, Keys.SHIFT, "Just one.")  # Shift+Enter: a new line
    assert box.get_attribute("value") == "Name a fruit.\nJust one." and not stored(driver)
    box.send_keys(Keys.ENTER)
    wait_reply(driver)
    first = stored(driver)
    assert first[0]["content"] == "Name a fruit.\nJust one."
    # Regenerate with other settings: the reply is made again for the same turn.
    set_settings(driver, max_tokens=3)
    driver.find_element("css selector", "button.regenerate").click()
    wait_reply(driver)
    again = stored(driver)
    assert len(again) == 2 and again[0] == first[0]
    assert again[1]["content"] == greedy(qwen, turns(first[:1]), max_tokens=3)
    # Edit the user turn: what followed it is dropped and the reply made anew.
    driver.find_element("css selector", ".message.user button.edit").click()
    editor = driver.find_element("css selector", ".message.user .edit textarea")
    editor.clear()
    editor.send_keys("Name a color.", Keys.ENTER)
    wait_reply(driver)
    edited = stored(driver)
    assert turns(edited[:1]) == [{"role": "user", "content": "Name a color."}] and len(edited) == 2
    assert edited[1]["content"] == greedy(qwen, turns(edited[:1]), max_tokens=3)
    assert driver.find_element("css selector", ".message.user .body").text == "Name a color."


def test_conversations_are_kept_across_reloads(qwen_page):
    driver = qwen_page
    set_settings(driver, max_tokens=2, system="You answer briefly.")
    send(driver, "First conversation")
    wait_reply(driver)
    first = stored(driver)
    driver.find_element("id", "new-chat").click()
    assert not driver.find_elements("css selector", ".message")
    send(driver, "Second conversation")
    wait_reply(driver)
    driver.refresh()
    titles = [e.text for e in driver.find_elements("css selector", "#conversations .open")]
    assert titles == ["Second conversation", "First conversation"]
    assert driver.find_element("css selector", ".message.user .body").text == "Second conversation"
    driver.find_element("css selector", "#conversations li:nth-child(2) .open").click()
    assert stored(driver) == first
    assert driver.find_element("css selector", ".message.user .body").text == "First conversation"
    assert reply_texts(driver) == [driver.find_element("css selector", ".message.assistant .body").text]
    # The settings are kept too.
    driver.find_element("id", "open-settings").click()
    assert driver.find_element("id", "set-system").get_attribute("value") == "You answer briefly."
    assert driver.find_element("id", "set-max_tokens").get_attribute("value") == "2"
    driver.find_element("id", "settings-cancel").click()
    driver.find_element("css selector", "#conversations li:nth-child(2) .delete").click()
    titles = [e.text for e in driver.find_elements("css selector", "#conversations .open")]
    assert titles == ["Second conversation"] and not driver.find_elements("css selector", ".message")
    driver.refresh()
    assert [e.text for e in driver.find_elements("css selector", "#conversations .open")] == titles


def test_stop_ends_the_reply_on_the_server(qwen_page, qwen):
    driver = qwen_page
    set_settings(driver, max_tokens=1500)
    before = qwen.metrics()
    send(driver, "Count from 1 to 500, one number per line.")
    wait_for(driver, lambda: len((reply_texts(driver) or [""])[-1]) > 12, SLOW, "the reply to start")
    driver.find_element("id", "stop").click()
    wait_for(driver, lambda: idle(driver), 10, "the page to stop")
    assert driver.find_element("id", "send").is_displayed() and not driver.find_element("id", "stop").is_displayed()
    shown = reply_texts(driver)[-1]
    assert "stopped" in driver.find_element("css selector", ".message.assistant .stats").text
    # The server saw the client leave: the request was cancelled, far short of max_tokens.
    wait_for(driver, lambda: qwen.metrics()["skiff:requests_cancelled_total"] >
             before["skiff:requests_cancelled_total"], 10, "the server to cancel the request")
    after = qwen.metrics()
    assert after["vllm:num_requests_running"] == 0
    assert after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"] < 500
    time.sleep(0.5)
    assert reply_texts(driver)[-1] == shown and stored(driver)[-1]["stopped"] is True


EVIL = ['<img src=x onerror="window.pwned=1">', "<script>window.pwned=1</script>",
        '<iframe src="javascript:window.pwned=1"></iframe>', "[click me](javascript:window.pwned=1)",
        '**<b onmouseover="window.pwned=1">bold</b>**', "`<i>code</i>`",
        '```html\n<img src=x onerror="window.pwned=1">\n```', '[x](https://a.example/"onmouseover="window.pwned=1)']


def rendered(driver, text):
    """What markdown.js makes of a text: its HTML, its text, the elements it holds."""
    return driver.execute_script("""
        const box = document.createElement('div');
        box.append(renderMarkdown(arguments[0]));
        return {html: box.innerHTML, text: box.textContent,
                tags: [...box.querySelectorAll('*')].map((e) => e.tagName.toLowerCase()),
                hrefs: [...box.querySelectorAll('a')].map((a) => a.getAttribute('href'))};""", text)


def test_markdown_renders_model_text_as_text(driver, qwen):
    open_page(driver, qwen.url + "/")
    for evil in EVIL:
        out = rendered(driver, evil)
        assert not {"img", "script", "iframe", "b", "i"} & set(out["tags"]), (evil, out["html"])
        assert all(href.startswith("https://") for href in out["hrefs"]), (evil, out["hrefs"])
        assert "onerror" not in out["html"] or "&lt;img" in out["html"], out["html"]
    code = rendered(driver, EVIL[-2])
    assert code["text"].startswith("html") and '<img src=x onerror="window.pwned=1">' in code["text"]
    # What each construct becomes.
    out = rendered(driver, "# Title\n\nSome **bold**, *em*, `x < y` and [a link](https://example.com/a?b=1&c=2).\n\n"
                           "- one\n- two\n  - nested\n\n3. three\n4. four\n\n> quoted\n\n"
                           "| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint('<b>')\n```\nsnake_case_name")
    for tag in ("h1", "strong", "em", "code", "a", "ul", "li", "ol", "blockquote", "table", "td", "pre", "button"):
        assert tag in out["tags"], (tag, out["html"])
    assert out["hrefs"] == ["https://example.com/a?b=1&c=2"]
    assert "<ol start=\"3\">" in out["html"] and "<li>two<ul><li>nested</li></ul></li></ul>" in out["html"]
    assert "print('&lt;b&gt;')" in out["html"] and "snake_case_name" in out["text"]
    # A stored reply holding markup shows as text after a reload.
    driver.execute_script("""
        localStorage.setItem('skiff.conversations', JSON.stringify([{id: 'x', title: 'evil', updated: 1, messages: [
          {role: 'user', content: arguments[0]}, {role: 'assistant', content: arguments[0]}]}]));
        localStorage.setItem('skiff.current', JSON.stringify('x'));""", "\n\n".join(EVIL))
    driver.refresh()
    wait_for(driver, lambda: driver.find_elements("css selector", ".message.assistant"), 10)
    assert not driver.find_elements("css selector", "#messages img, #messages script, #messages iframe")
    assert '<img src=x onerror="window.pwned=1">' in driver.find_element("css selector", ".message.user .body").text
    assert driver.execute_script("return window.pwned") is None


# A stream as a server with a reasoning parser sends it, cut at odd places:
# reasoning_content deltas, then content that opens with a <think> block.
FAKE_STREAM = (
    'data: {"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Let me '
    'think."}}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":"<think>more</think>\\n\\nHi **there**"},'
    '"finish_reason":"stop"}]}\n\n: keep-alive\n\ndata: {"choices":[],"usage":{"prompt_tokens":5,'
    '"completion_tokens":7,"total_tokens":12}}\n\ndata: [DONE]\n\n')


def test_reasoning_is_shown_collapsed(driver, qwen):
    open_page(driver, qwen.url + "/")
    # The page's fetch of v1/chat/completions answered by a stream made here, in pieces of 7 bytes.
    driver.execute_script("""
        const realFetch = window.fetch, text = arguments[0];
        window.fetch = (url, options) => {
          if (!String(url).endsWith('chat/completions')) return realFetch(url, options);
          const bytes = new TextEncoder().encode(text);
          let at = 0;
          const body = new ReadableStream({pull(controller) {
            if (at >= bytes.length) return controller.close();
            controller.enqueue(bytes.slice(at, at += 7));
          }});
          return Promise.resolve(new Response(body, {headers: {'Content-Type': 'text/event-stream'}}));
        };""", FAKE_STREAM)
    send(driver, "Hello")
    wait_reply(driver)
    reply = stored(driver)[1]
    assert reply["content"] == "Hi **there**" and reply["reasoning"] == "Let me think.\nmore"
    details = driver.find_element("css selector", ".message.assistant details.reasoning")
    assert details.get_attribute("open") is None and not details.find_element("css selector", ".text").is_displayed()
    assert driver.find_element("css selector", ".message.assistant .body strong").text == "there"
    assert driver.find_element("css selector", ".message.assistant .stats").text.startswith("7 tokens")
    details.find_element("css selector", "summary").click()
    assert details.find_element("css selector", ".text").text == "Let me think.\nmore"


class PrefixProxy:
    """A reverse proxy serving a server under a path prefix, as nginx's
    `location /prefix/ { proxy_pass http://upstream/; }`: the prefix is stripped,
    responses are passed on as they come (SSE included), and a request outside
    the prefix is a 404, recorded."""

    def __init__(self, upstream_port, prefix):
        self.outside = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.forward()

            def do_POST(self):
                self.forward()

            def forward(self):
                if not self.path.startswith(prefix):
                    proxy.outside.append(self.path)
                    return self.send_error(404)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=SLOW)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                upstream.request(self.command, "/" + self.path[len(prefix):], body or None, headers)
                response = upstream.getresponse()
                self.send_response(response.status)
                for k, v in response.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.end_headers()  # HTTP/1.0: the body ends when the connection closes
                try:
                    while chunk := response.read1(65536):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                finally:
                    upstream.close()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{prefix}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_page_works_under_a_path_prefix(driver, qwen):
    proxy = PrefixProxy(qwen.port, "/some/prefix/")
    try:
        open_page(driver, proxy.url)
        set_settings(driver, temperature=0, max_tokens=6)
        send(driver, "Say hi.")
        wait_reply(driver)
        messages = stored(driver)
        assert messages[1]["content"] == greedy(qwen, turns(messages[:1]), max_tokens=6)
        assert "error" not in messages[1]
        assert proxy.outside == []
    finally:
        proxy.close()


@pytest.fixture(scope="module")
def qwen_with_key():
    server = Server(need(QWEN), "-c", "1024", "--served-model-name", "keyed", api_key="webui-key")
    yield server
    assert server.stop() == 0, "".join(server.log)


def test_api_key_is_asked_for_then_sent(driver, qwen_with_key):
    from selenium.webdriver.common.keys import Keys

    server = qwen_with_key
    # The page needs no key; the API still does.
    assert httpx.get(server.url + "/").status_code == 200
    assert httpx.get(server.url + "/v1/models").status_code == 401
    driver.get(server.url + "/")
    driver.execute_script("localStorage.clear()")
    driver.refresh()
    key_dialog = driver.find_element("id", "key-dialog")
    wait_for(driver, key_dialog.is_displayed, 10, "the page to ask for the key")
    driver.find_element("id", "api-key").send_keys("wrong", Keys.ENTER)
    wait_for(driver, lambda: "refused" in driver.find_element("id", "key-title").text, 10, "a wrong key refused")
    assert key_dialog.is_displayed()
    driver.find_element("id", "api-key").send_keys("webui-key", Keys.ENTER)
    wait_for(driver, lambda: driver.find_element("id", "model-name").text == "keyed", 30, "the model's name")
    assert not key_dialog.is_displayed()
    set_settings(driver, max_tokens=3)
    send(driver, "Hello")
    wait_reply(driver)
    reply = stored(driver)[1]
    assert reply["content"] and "error" not in reply
    # Kept for the next visit.
    driver.refresh()
    wait_for(driver, lambda: driver.find_element("id", "model-name").text == "keyed", 30, "the model's name")
    assert not driver.find_element("id", "key-dialog").is_displayed()


def test_theme_toggle_is_kept(driver, qwen):
    open_page(driver, qwen.url + "/")
    assert driver.execute_script("return document.documentElement.dataset.theme") is None  # the system's
    driver.find_element("id", "theme-toggle").click()
    theme = driver.execute_script("return document.documentElement.dataset.theme")
    assert theme in ("light", "dark")
    background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    driver.refresh()
    assert driver.execute_script("return document.documentElement.dataset.theme") == theme
    driver.find_element("id", "theme-toggle").click()
    assert driver.execute_script("return getComputedStyle(document.body).backgroundColor") != background


def test_page_is_served_on_get_only(qwen):
    for path in ("/", "/index.html"):
        r = httpx.get(qwen.url + path)
        assert r.status_code == 200 and r.headers["content-type"] == "text/html; charset=utf-8"
        assert r.headers["cache-control"] == "no-cache" and "script-src 'self'" in r.headers["content-security-policy"]
        assert '<script src="webui.js"' in r.text
    for path, kind in (("/webui.js", "text/javascript"), ("/markdown.js", "text/javascript"), ("/webui.css", "text/css")):
        r = httpx.get(qwen.url + path)
        assert r.status_code == 200 and r.headers["content-type"].startswith(kind) and len(r.content) > 1000
        assert r.content == (WEBUI / path[1:]).read_bytes()
    assert httpx.head(qwen.url + "/").status_code == 200
    assert httpx.post(qwen.url + "/", json={}).status_code == 404
    assert httpx.get(qwen.url + "/nope.js").status_code == 404
    assert httpx.get(qwen.url + "/webui").status_code == 404


def test_no_webui_is_a_404():
    server = Server(STORIES, "--no-webui")
    try:
        for path in ("/", "/index.html", "/webui.js"):
            r = httpx.get(server.url + path)
            assert r.status_code == 404 and json.loads(r.text)["error"]["message"] == f"no route for GET {path}"
    finally:
        assert server.stop() == 0, "".join(server.log)
