"""``tiengow serve`` in a real Chromium (Debian's, driven by Playwright): a hand played by
clicking tiles and buttons, a bot match watched, a record stepped through. Screenshots go to
``runs/screenshots/`` (ignored by git). ``.ci/run`` installs Chromium when it is missing; a
machine without it skips these tests, saying so."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("starlette")
sync_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright (the dev extra)")

from tiengow.web.server import running  # noqa: E402
from tiengow_env.game import replay  # noqa: E402

CHROMIUM = os.environ.get("TIENGOW_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path("runs/screenshots")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (as .ci/run does)", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def site(tmp_path):
    with running(tmp_path) as url:
        yield url, tmp_path


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.set_default_timeout(30_000)
    yield page
    context.close()
    assert not errors, errors


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name))


def open_page(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")


def start_playing(page, url: str, seed: str = "5", hands: str = "2", bots: str | None = None) -> None:
    """A hand started on the Play tab, its first tiles shown; ``bots`` in seats 1-3 when given."""
    open_page(page, url)
    page.fill("#seed", seed)
    page.fill("#hands", hands)
    if bots is not None:
        for k in range(1, 4):
            page.fill(f"#bot-inputs input[data-seat='{k}']", bots)
    page.click("#start")
    page.wait_for_selector("#hand .tile")


def wait_for_change(page, version: str) -> str:
    page.wait_for_function("v => document.body.dataset.version !== v", arg=version)
    return page.evaluate("document.body.dataset.version")


def test_a_hand_played_by_clicking_settles_as_replay_of_its_record(page, site):
    url, records = site
    start_playing(page, url, seed="3", hands="1", bots="greedy")
    version = page.evaluate("document.body.dataset.version")
    turns = 0
    while not page.is_visible("#settlement"):
        # The first listed move, made by selecting its tiles in the hand and pressing the button.
        action = json.loads(page.get_attribute("#moves .move >> nth=0", "data-action"))
        kind = "play" if "play" in action else "discard"
        taken: set[int] = set()
        for tile in action[kind]:
            for handle in page.query_selector_all(f"#hand .tile[data-tile='{tile}']"):
                index = int(handle.get_attribute("data-index"))
                if index not in taken:
                    taken.add(index)
                    handle.click()
                    break
        page.click("#act-play" if kind == "play" else "#act-discard")
        version = wait_for_change(page, version)
        turns += 1
        if turns == 2:
            shot(page, "play_in_progress.png")
        assert turns <= 8
    net = json.loads(page.get_attribute("#settlement [data-net]", "data-net"))
    path = page.get_attribute("#settlement [data-record]", "data-record")
    result = replay(json.loads((records / path).read_text()))
    assert net == result["net"]
    assert page.inner_text("#settlement .settle-head").startswith("Settlement with W = ")
    assert len(page.query_selector_all("#settlement table.settle tbody tr")) == 4
    # The hand is over: its buttons go (Next hand is on the settlement), the prompt says so.
    for button in ("#act-play", "#act-discard", "#act-clear", "#act-declare", "#act-decline"):
        assert not page.is_visible(button), button
    assert page.inner_text("#prompt") == "The hand is over."
    shot(page, "play_settlement.png")


def test_an_invalid_choice_is_explained_on_the_page(page, site):
    url, _ = site
    open_page(page, url)
    page.fill("#seed", "13")  # seed 13: the person banks and leads; tiles 1-1 and 2-1 are no combination
    page.click("#start")
    page.wait_for_selector("#hand .tile")
    page.click("#hand .tile[data-index='0']")
    page.click("#hand .tile[data-index='7']")
    page.click("#act-play")
    page.wait_for_selector("#move-error:not(:empty)")
    assert "is not a combination" in page.inner_text("#move-error")


def box(page, selector: str) -> dict:
    """The element's box on the screen and, for a scrolling one, its content's and visible height."""
    return page.eval_on_selector(
        selector,
        "e => { const r = e.getBoundingClientRect(); "
        "return {top: r.top, bottom: r.bottom, scroll: e.scrollHeight, client: e.clientHeight}; }",
    )


@pytest.mark.parametrize("height", [800, 1400])
def test_the_log_shows_its_last_line_within_the_window(browser, site, height):
    """At the end of a hand the log reaches down to the window's foot (at most) and shows its last
    line whole: all of it when it fits, else it scrolls within the window, not clipped at the table's
    height with the page's foot left empty."""
    url, _ = site
    context = browser.new_context(viewport={"width": 1280, "height": height})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        start_playing(page, url, seed="5", hands="1", bots="greedy")
        while not page.is_visible("#settlement"):
            version = page.evaluate("document.body.dataset.version")
            page.click("#moves .move >> nth=0")
            wait_for_change(page, version)
        shot(page, f"log_1280x{height}.png")
        log, last = box(page, "#log"), box(page, "#log .line:last-child")
        assert page.evaluate("document.documentElement.scrollHeight") <= height  # the page does not scroll
        assert log["bottom"] <= height
        assert log["top"] <= last["top"] and last["bottom"] <= log["bottom"], (log, last)
        assert log["scroll"] <= log["client"] or log["bottom"] >= height - 20, log
    finally:
        context.close()


def set_up_watching(page, url: str, bots: list[str]) -> None:
    """The Watch tab, one hand of seed 4, and ``bots`` in seats 0, 1, ..."""
    open_page(page, url)
    page.click("#tabs button[data-tab=watch]")
    page.fill("#seed", "4")
    page.fill("#hands", "1")
    for k, spec in enumerate(bots):
        page.fill(f"#bot-inputs input[data-seat='{k}']", spec)


def test_a_bot_match_is_watched_with_the_bots_view(page, site):
    url, records = site
    set_up_watching(page, url, ["ppo", "expert", "ppo", "greedy"])
    page.fill("#speed", "100")
    page.dispatch_event("#speed", "input")
    page.click("#start")
    page.wait_for_selector("#pause:text-is('Pause')")  # the match is on
    page.click("#pause")  # then move by move, so that the panel holds still while it is read
    page.wait_for_load_state("networkidle")  # a step already asked for has arrived
    version = page.evaluate("document.body.dataset.version")
    while not page.query_selector("#explain .bar-row.chosen"):  # until a ppo seat has moved
        page.click("#step")
        version = wait_for_change(page, version)
    bars = page.query_selector_all("#explain .bar-row")
    assert bars and "%" in page.inner_text("#explain .bar-row.chosen .bar-value")
    shot(page, "watch.png")
    page.click("#pause")  # resume: the bots play the hand out
    page.wait_for_selector("#settlement:not(.hidden)", timeout=60_000)
    net = json.loads(page.get_attribute("#settlement [data-net]", "data-net"))
    path = page.get_attribute("#settlement [data-record]", "data-record")
    assert replay(json.loads((records / path).read_text()))["net"] == net


def test_a_tab_left_while_a_bot_thinks_shows_no_working_badge_and_stays(page, site):
    """Replay chosen while a watched bot's step is under way: "working…" is Watch's, so Replay shows
    none, then or after the bot's answer, which does not pull the page back to Watch. The step is held
    in the browser until Replay has been looked at, so that the bot thinks as long as the test needs."""
    url, _ = site
    held = []
    page.route("**/api/step", lambda route: held.append(route))
    set_up_watching(page, url, ["greedy"] * 4)
    with page.expect_request(lambda request: request.url.endswith("/api/step")):
        page.click("#start")
    page.wait_for_selector("#busy", state="visible")  # the first step is under way, and slow
    assert len(held) == 1
    page.click("#tabs button[data-tab=replay]")
    page.wait_for_selector("#replay-file option", state="attached")  # Replay's own request is done
    assert not page.is_visible("#busy")
    with page.expect_response(lambda response: response.url.endswith("/api/step")):
        held[0].continue_()  # the bot answers
    page.wait_for_load_state("networkidle")  # and its answer has been read
    assert page.is_visible("#replay") and not page.is_visible("#game") and not page.is_visible("#busy")
    shot(page, "replay_after_leaving_watch.png")
    page.unroute("**/api/step")
    page.click("#tabs button[data-tab=watch]")  # the match is there, paused, as the bot left it
    page.wait_for_selector("#table .seat")
    page.wait_for_load_state("networkidle")
    assert page.inner_text("#pause") == "Resume" and not page.is_visible("#busy")
    assert page.evaluate("document.body.dataset.version") == "1.1"  # hand 1, after the one step


def test_a_record_is_stepped_through_forwards_and_backwards(page, site, tmp_path):
    url, records = site
    from test_web import random_record

    record = random_record(12)
    (records / "saved").mkdir()
    (records / "saved" / "hand-001.json").write_text(json.dumps(record))
    result = replay(record)
    frames = len(result["tricks"]) + 2
    open_page(page, url)
    page.click("#tabs button[data-tab=replay]")
    page.wait_for_selector("#replay-file option[value='saved/hand-001.json']", state="attached")
    page.select_option("#replay-file", "saved/hand-001.json")
    page.click("#replay-open")
    page.wait_for_selector("#replay-view table.replay")
    assert page.inner_text("#replay-pos").startswith(f"1 / {frames}: The deal")
    for k in range(2, frames + 1):
        page.click("#replay-next")
        assert page.inner_text("#replay-pos").startswith(f"{k} / {frames}")
        if k == 3:
            shot(page, "replay.png")
    net = json.loads(page.get_attribute("#replay-view [data-net]", "data-net"))
    assert net == result["net"]
    page.click("#replay-prev")
    page.keyboard.press("ArrowLeft")
    assert page.inner_text("#replay-pos").startswith(f"{frames - 2} / {frames}: Trick {frames - 3}")
    winner = result["tricks"][frames - 4]["winner"]
    assert page.inner_text("#replay-view tr.winner td >> nth=0").startswith(f"seat {winner}")


def test_a_bot_the_page_may_not_run_is_refused_and_a_hand_the_disk_refuses_says_so(page, site):
    url, records = site
    set_up_watching(page, url, ["os:getcwd"])
    page.click("#start")
    page.wait_for_selector("#setup-error:not(:empty)")
    assert "is not a built-in agent" in page.inner_text("#setup-error")
    set_up_watching(page, url, ["greedy"] * 4)
    page.fill("#speed", "100")
    page.dispatch_event("#speed", "input")
    page.click("#start")
    page.wait_for_selector("#hand-title, #explain, .seat")
    folder = page.evaluate("fetch('/api/state').then(r => r.json()).then(d => d.match.folder)")
    (records / folder).write_text("a file where the match's folder goes")
    page.wait_for_selector("#settlement:not(.hidden)", timeout=60_000)
    assert "Record not saved: cannot save the hand record hand-001.json" in page.inner_text("#settlement")
    shot(page, "record_not_saved.png")


def test_a_tab_left_behind_draws_the_game_as_it_is_when_its_move_is_refused(page, site, browser):
    url, _ = site
    start_playing(page, url)
    other = page.context.new_page()  # the same session in a second tab, which moves first
    open_page(other, url)
    version = other.evaluate("document.body.dataset.version")
    other.click("#moves .move >> nth=0")
    wait_for_change(other, version)
    page.click("#moves .move >> nth=0")  # the first tab still shows the old view
    page.wait_for_selector("#move-error:not(:empty)")
    assert "the game has moved on" in page.inner_text("#move-error")
    page.wait_for_function(
        "v => document.body.dataset.version === v", arg=other.evaluate("document.body.dataset.version")
    )
    assert page.inner_text("#log") == other.inner_text("#log")


def test_next_hand_clicked_twice_starts_one_hand_and_says_nothing_wrong(page, site):
    url, _ = site
    start_playing(page, url)
    while not page.is_visible("#settlement"):
        version = page.evaluate("document.body.dataset.version")
        page.click("#moves .move >> nth=0")
        wait_for_change(page, version)
    page.dblclick("#next-hand")
    page.wait_for_selector("#hand .tile")
    page.wait_for_load_state("networkidle")
    assert page.inner_text("#setup-error") == "" and page.inner_text("#match-info").startswith("Hand 2 of 2")


def test_tiles_are_selected_from_the_keyboard(page, site):
    url, _ = site
    start_playing(page, url)
    action = json.loads(page.get_attribute("#moves .move >> nth=0", "data-action"))
    kind = "play" if "play" in action else "discard"
    index = page.get_attribute(f"#hand .tile[data-tile='{action[kind][0]}']", "data-index")
    page.focus(f"#hand .tile[data-index='{index}']")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.dataset.index") == index  # focus stays on the tile
    assert page.get_attribute(f"#hand .tile[data-index='{index}']", "aria-pressed") == "true"
    assert action[kind][0] in page.inner_text("#prompt")
    page.keyboard.press(" ")
    assert page.get_attribute(f"#hand .tile[data-index='{index}']", "aria-pressed") == "false"


def test_a_hand_is_played_on_a_phone(browser, site):
    url, _ = site
    context = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        start_playing(page, url, hands="1")
        while not page.is_visible("#settlement"):
            version = page.evaluate("document.body.dataset.version")
            page.tap("#moves .move >> nth=0", timeout=5_000)  # nothing lies over the moves
            wait_for_change(page, version)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375  # no sideways scrolling
        shot(page, "phone_settlement.png")
    finally:
        context.close()
