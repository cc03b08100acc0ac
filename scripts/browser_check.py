#!/usr/bin/env python3
"""Drives the page of `oware serve` in headless Chromium (run by scripts/browser-check).

    browser_check.py URL BIN TABLES OUT

URL: the server's address; BIN: the oware binary; TABLES: the directory it serves (tiers
0..=12); OUT: the folder for the screenshots. Every value shown on a house is compared with
`BIN probe --json` of the position the page shows. Exits non-zero on the first difference.
"""

import json
import subprocess
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

URL, BIN, TABLES, OUT = sys.argv[1:5]
URL = URL.rstrip("/") + "/"
checks = 0


def fail(message):
    print(f"browser-check: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def start_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in [
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--window-size=1280,900",
        f"--user-data-dir={tempfile.mkdtemp(prefix='oware-chromium-')}",
    ]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


driver = start_browser()
body = lambda: driver.find_element(By.TAG_NAME, "body")


def ready_token():
    return driver.execute_script("return document.body.dataset.ready || ''")


def wait_render(before):
    """Waits until the page has drawn again since `before` and no oracle move is pending."""
    WebDriverWait(driver, 10).until(
        lambda d: (t := ready_token()).isdigit() and t != before,
        message="the page did not draw",
    )


def act(action):
    before = ready_token()
    action()
    wait_render(before)


def shown():
    """The position, the side to move and {house: value} the page shows."""
    return driver.execute_script(
        """
        const b = document.body.dataset;
        const values = {};
        const distances = {};
        for (const h of document.querySelectorAll('#row-' + b.mover + ' .house[data-score]')) {
            values[h.dataset.house] = Number(h.dataset.score);
            if (h.dataset.distance !== undefined) distances[h.dataset.house] = Number(h.dataset.distance);
        }
        const playable = [...document.querySelectorAll('#row-' + b.mover + ' .house.playable')]
            .map((h) => Number(h.dataset.house));
        return { position: b.position, mover: b.mover, ply: Number(b.ply), values, distances, playable };
        """
    )


def probe(position):
    out = subprocess.run(
        [BIN, "probe", "--dir", TABLES, "--json", position], capture_output=True, text=True
    )
    if out.returncode != 0:
        fail(f"oware probe {position}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def check_values():
    """The values on the houses, and the distances of the nonzero ones, are those of
    `oware probe --json`."""
    global checks
    s = shown()
    moves = probe(s["position"])["moves"]
    want = {str(m["house"]): m["score"] for m in moves}
    if s["values"] != want:
        fail(f"position {s['position']}: the page shows {s['values']}, oware probe says {want}")
    far = {str(m["house"]): m["distance"] for m in moves if m["score"] != 0 and m["distance"] is not None}
    if s["distances"] != far:
        fail(f"position {s['position']}: the page shows distances {s['distances']}, oware probe says {far}")
    if sorted(int(h) for h in want) != sorted(s["playable"]):
        fail(f"position {s['position']}: playable houses {s['playable']}, legal {sorted(want)}")
    checks += 1
    return s


def house(side, h):
    return driver.find_element(By.CSS_SELECTOR, f'#row-{side} .house[data-house="{h}"]')


def press(key):
    act(lambda: ActionChains(driver).send_keys(key).perform())


def click(element_id):
    act(lambda: driver.find_element(By.ID, element_id).click())


def load(fragment=""):
    """A fresh load of the page (a new document, not a change of the fragment)."""
    driver.get("about:blank")
    driver.get(URL + ("#" + fragment if fragment else ""))
    WebDriverWait(driver, 10).until(lambda d: ready_token().isdigit(), message="no first draw")


def expect_position(position, what):
    s = check_values()
    if s["position"] != position:
        fail(f"{what}: the page shows {s['position']}, expected {position}")


# --- a game by clicks and keys -----------------------------------------------------------
load()
s = check_values()
if s["position"] != "1 1 1 1 1 1 1 1 1 1 1 1" or s["mover"] != "S":
    fail(f"the first position is {s['position']} ({s['mover']} to move)")
history = [s["position"]]
for ply in range(12):
    s = shown()
    if not s["playable"]:
        break
    h = s["playable"][(ply * 7) % len(s["playable"])]
    if ply % 2:
        press(str(h + 1))
    else:
        act(lambda: house(s["mover"], h).click())
    history.append(check_values()["position"])
if len(history) < 6:
    fail(f"the game ended after {len(history) - 1} plies")

# --- undo and redo: buttons and arrow keys -----------------------------------------------
click("undo")
expect_position(history[-2], "undo")
press("\ue012")  # arrow left
expect_position(history[-3], "arrow left")
press("\ue014")  # arrow right
expect_position(history[-2], "arrow right")
click("redo")
expect_position(history[-1], "redo")
act(lambda: driver.find_element(By.CSS_SELECTOR, '#movelist li[data-ply="2"]').click())
expect_position(history[2], "a click on the move list")
click("last")
expect_position(history[-1], "the last position")
driver.set_window_size(1100, 720)
driver.save_screenshot(f"{OUT}/desktop.png")
driver.set_window_size(1280, 900)

# --- a shared URL gives the same game ---------------------------------------------------
shared = driver.current_url
driver.get("about:blank")
driver.get(shared)
WebDriverWait(driver, 10).until(lambda d: ready_token().isdigit())
expect_position(history[-1], "the shared URL")

# --- edit mode --------------------------------------------------------------------------
driver.find_element(By.ID, "edit-toggle").click()
WebDriverWait(driver, 5).until(lambda d: d.find_element(By.ID, "edit-S0").is_displayed())
field = driver.find_element(By.ID, "edit-S0")
field.clear()
field.send_keys("49")
driver.find_element(By.ID, "edit-apply").click()
error = driver.find_element(By.ID, "edit-error").text
if "0..48" not in error:
    fail(f"a count of 49 was not refused clearly: {error!r}")
paste = driver.find_element(By.ID, "edit-paste")
paste.send_keys("0 0 1 2 0 0 1 1 0 0 0 0")
driver.find_element(By.ID, "edit-read").click()
if driver.find_element(By.ID, "edit-error").text:
    fail("the pasted position was refused: " + driver.find_element(By.ID, "edit-error").text)
act(lambda: driver.find_element(By.ID, "edit-apply").click())
expect_position("0 0 1 2 0 0 1 1 0 0 0 0", "the pasted position")
outcome = driver.find_element(By.ID, "outcome").text
if "With perfect play from here" not in outcome:
    fail(f"no perfect-play totals shown: {outcome!r}")

# --- play mode: the perfect oracle answers with a best move -----------------------------
load("pos=1,1,1,1,1,1,1,1,1,1,1,1&side=S&cap=0,0&moves=&ply=0")
act(lambda: Select(driver.find_element(By.ID, "mode")).select_by_value("S"))
s = check_values()
h = s["playable"][0]
# The oracle answers within the same wait: the position it faced is the user's move's child.
after_user = next(m["position"] for m in probe(s["position"])["moves"] if m["house"] == h)
act(lambda: house("S", h).click())
WebDriverWait(driver, 10).until(lambda d: shown()["ply"] == 2 and ready_token().isdigit())
answer = driver.execute_script("return document.querySelector('#movelist li[data-ply=\"2\"]').textContent")
played = int(answer.split()[1]) - 1
moves = probe(after_user)["moves"]
# The first move of the list: the best score, and among equal scores the one that converts.
if played != moves[0]["house"]:
    fail(f"the perfect oracle played house {played} at {after_user}: not the first of {moves}")
check_values()

# --- a link without a mode is analysis again; without a ply it opens at its end ------------
load("pos=1,1,1,1,1,1,1,1,1,1,1,1&side=S&cap=0,0&moves=12")
if Select(driver.find_element(By.ID, "mode")).first_selected_option.get_attribute("value") != "analysis":
    fail("a link without a mode kept the play mode")
if shown()["ply"] != 2:
    fail(f"a link without a ply shows ply {shown()['ply']}, not its end (2)")
check_values()

# --- two clicks before the board is redrawn play one move -------------------------------
before = shown()
h = before["playable"][0]
act(lambda: driver.execute_script(
    "const b = arguments[0]; b.click(); b.click();", house(before["mover"], h)))
after = shown()
if after["ply"] != before["ply"] + 1:
    fail(f"a double click went from ply {before['ply']} to {after['ply']}")
check_values()

# --- an illegal move in a link cuts the game there, with a notice -----------------------
load("pos=0,0,0,0,0,1,1,1,1,1,1,1&side=S&cap=2,3&moves=13")
notice = driver.find_element(By.ID, "notice")
if "not legal" not in notice.text or shown()["ply"] != 0:
    fail(f"an illegal move was not cut: {notice.text!r}, ply {shown()['ply']}")
if "moves=&" not in driver.current_url:
    fail(f"the cut game is not in the URL: {driver.current_url}")

# --- a shared URL that does not read: the default game, and a notice that stays ----------
START = "1 1 1 1 1 1 1 1 1 1 1 1"
for bad in [
    "pos=5,5,5,5,5,5,5,5,5,5,5,5",
    "pos=1,1,x",
    "pos=1,1,1,1,1,1,1,1,1,1,1,1&side=S&cap=30,30",
    "pos=1,1,1,1,1,1,1,1,1,1,1,1&side=S&cap=0,0&moves=9",
]:
    load(bad)
    link = driver.find_element(By.ID, "link-notice")
    if not link.is_displayed() or "does not read" not in link.text:
        fail(f"#{bad}: no notice that the link does not read ({link.text!r})")
    expect_position(START, f"#{bad}")
    # Redraws (another oracle level, another seed) keep it; a move clears it.
    act(lambda: Select(driver.find_element(By.ID, "level")).select_by_value("1"))
    act(lambda: Select(driver.find_element(By.ID, "level")).select_by_value("0"))
    if not link.is_displayed() or "does not read" not in link.text:
        fail(f"#{bad}: a redraw cleared the notice")
act(lambda: house("S", shown()["playable"][0]).click())
if driver.find_element(By.ID, "link-notice").is_displayed():
    fail("the notice of a bad link stayed after a move")
# The same fragment typed into the address bar of an open page.
before = ready_token()
driver.execute_script("location.hash = 'pos=1,1,x'")
wait_render(before)
if "does not read" not in driver.find_element(By.ID, "link-notice").text:
    fail("a bad fragment typed into the address bar has no notice")

# --- badges: the colour of the move's value, the game's result apart; both numberings -----
load("pos=1,1,1,1,1,1,1,1,1,1,1,1&side=S&cap=16,20&moves=&ply=0")
cells = driver.execute_script(
    """
    return [...document.querySelectorAll('#row-S .house[data-score]')].map((h) => ({
        house: Number(h.dataset.house), score: Number(h.dataset.score),
        classes: h.className, result: h.querySelector('.result').className,
        resultText: h.querySelector('.result').textContent, title: h.title }));
    """
)
sign = lambda v: "win" if v > 0 else "loss" if v < 0 else "draw"
if not cells:
    fail("no values shown for the badge check")
for c in cells:
    if sign(c["score"]) not in c["classes"].split():
        fail(f"house {c['house']}: value {c['score']} with classes {c['classes']!r}")
    # South has captured 16, North 20: the game's result is -4 + the move's value.
    if c["result"].split()[-1] != sign(c["score"] - 4) or not c["resultText"]:
        fail(f"house {c['house']}: game result {c['result']!r} for value {c['score']} at 16-20")
    if f"house {c['house'] + 1} (index {c['house']})" not in c["title"]:
        fail(f"house {c['house']}: the tooltip {c['title']!r} lacks both numberings")
if not any(sign(c["score"]) != sign(c["score"] - 4) for c in cells):
    fail(f"no house whose colour and game result differ: {cells}")

# --- play mode can hide the values of the user's own moves --------------------------------
load("pos=1,1,1,1,1,1,1,1,1,1,1,1&side=S&cap=0,0&moves=&ply=0&mode=S&level=0&seed=1&hide=1")
if not driver.find_element(By.ID, "hide").is_selected():
    fail("hide=1 in the link did not tick 'hide my values'")
masked = driver.execute_script(
    """
    const hs = [...document.querySelectorAll('#row-S .house.playable')];
    return { n: hs.length, values: hs.map((h) => h.querySelector('.value').textContent),
             scored: document.querySelectorAll('#row-S .house[data-score], #row-S .house.best').length };
    """
)
if masked["n"] == 0 or masked["scored"] or any(v != "?" for v in masked["values"]):
    fail(f"values shown with 'hide my values': {masked}")
act(lambda: driver.find_element(By.ID, "hide").click())
check_values()
if "hide=1" in driver.current_url:
    fail(f"hide=1 stayed in the URL: {driver.current_url}")

# --- a phone's width ---------------------------------------------------------------------
driver.set_window_size(390, 844)
driver.save_screenshot(f"{OUT}/phone.png")
driver.set_window_size(1280, 900)

# --- the console has no errors ------------------------------------------------------------
errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
if errors:
    fail(f"console errors: {errors}")

# --- a missing tier: the legal moves, and how to generate it ------------------------------
load("pos=2,2,2,2,2,2,1,0,0,0,0,0&side=S&cap=17,18")
notice = driver.find_element(By.ID, "notice")
WebDriverWait(driver, 10).until(lambda d: notice.is_displayed())
if "Tier 13" not in notice.text or "oware generate" not in notice.text:
    fail(f"the missing tier is not explained: {notice.text!r}")
s = shown()
if s["values"] or len(s["playable"]) != 6:
    fail(f"a missing tier should show 6 legal moves without values: {s}")
driver.save_screenshot(f"{OUT}/missing-tier.png")
for e in driver.get_log("browser"):
    if e["level"] == "SEVERE" and not ("/api/v1/probe" in e["message"] and "404" in e["message"]):
        fail(f"console error beside the expected 404: {e}")

driver.quit()
print(f"browser-check: {checks} positions checked against oware probe, 0 console errors")
