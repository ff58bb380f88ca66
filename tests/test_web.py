"""``tiengow serve`` without a browser: the JSON API, refused requests, the records folder's
walls, the replay and league views, sessions, agents' explanations, and a load test of 20
sessions at once against a real uvicorn server on the loopback."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

with warnings.catch_warnings():  # starlette's test client warns that it would rather have httpx2
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from tiengow.agents import make_agent  # noqa: E402
from tiengow.agents.cfr import DEFAULT_POLICY as CFR_POLICY  # noqa: E402
from tiengow.agents.ppo import DEFAULT_POLICY as PPO_POLICY  # noqa: E402
from tiengow.web.app import Sessions, create_app  # noqa: E402
from tiengow.web.records import league_view  # noqa: E402
from tiengow.web.server import bind, running  # noqa: E402
from tiengow_env.game import Game, replay  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def client(tmp_path):
    return TestClient(create_app(tmp_path), base_url="http://127.0.0.1")


def new_match(client, **body):
    response = client.post("/api/new", json={"mode": "play", "bots": "random", "hands": 1, "seed": 13, **body})
    assert response.status_code == 200, response.text
    return response.json()["match"]


def play_out(client, match, rng):
    """Random listed moves until the hand is over; the final view."""
    while match["settlement"] is None:
        assert match["your_turn"] and match["moves"]
        response = client.post("/api/move", json={"option": rng.randrange(len(match["moves"]))})
        assert response.status_code == 200, response.text
        match = response.json()["match"]
    return match


def test_a_hand_played_through_the_api_is_saved_and_replays_to_the_settlement_shown(client, tmp_path):
    match = play_out(client, new_match(client, hands=2, seed=11), random.Random(0))
    shown = match["settlement"]
    record = json.loads((tmp_path / match["finished"][0]["record"]).read_text())
    result = replay(record)
    assert shown["net"] == result["net"] and shown["settlement"] == result["settlement"]
    assert shown["columns"] == result["columns"] and sum(shown["net"]) == 0
    # Each row settling with W names its multipliers; the chips column adds up to W's total.
    assert shown["header"] == ["seat", "columns", "points", "multipliers", "chips"]
    assert len(shown["rows"]) == 4 and shown["rows"][-1][0].endswith("(W)")
    assert any("banker" in line for line in shown["multipliers"])
    assert [s["chips"] for s in match["seats"]] == shown["chips_after"] == result["net"]
    # The second hand: the winner of the last trick banks it.
    match = client.post("/api/next", json={}).json()["match"]
    assert match["hand"] == 2 and match["banker"] == result["last_trick_winner"]
    match = play_out(client, match, random.Random(1))
    assert match["match_over"]
    lines = (tmp_path / match["folder"] / "match.jsonl").read_text().splitlines()
    assert [replay(json.loads(line))["net"] for line in lines] == [h["net"] for h in match["finished"]]


def state(client):
    return client.get("/api/state").json()


def test_a_hand_the_disk_will_not_save_still_counts_and_says_why(client, tmp_path):
    match = new_match(client, hands=2, seed=11)
    (tmp_path / match["folder"]).write_text("a file where the match's folder goes")
    match = play_out(client, match, random.Random(0))
    (last,) = match["finished"]
    assert last["record"] is None and "cannot save the hand record hand-001.json" in last["save_error"]
    assert match["settlement"] and sum(last["net"]) == 0 and [s["chips"] for s in match["seats"]] == last["net"]
    (tmp_path / match["folder"]).unlink()  # the disk is back: the next hand saves both hands in match.jsonl
    match = play_out(client, client.post("/api/next", json={}).json()["match"], random.Random(1))
    assert match["finished"][1]["record"] == f"{match['folder']}/hand-002.json"
    lines = (tmp_path / match["folder"] / "match.jsonl").read_text().splitlines()
    assert [replay(json.loads(line))["net"] for line in lines] == [h["net"] for h in match["finished"]]


@pytest.mark.parametrize(
    "path, body, status, words",
    [
        ("/api/move", {"option": 99}, 400, "there is no move 99"),
        ("/api/move", {"option": "1"}, 400, "there is no move"),
        ("/api/move", {"play": ["6-6", "x"]}, 400, "'x' is not a tile: write tiles as a-b"),
        ("/api/move", {"play": "6-6"}, 400, "list of 1 to 8 tile names"),
        ("/api/move", {"play": ["7-7"]}, 400, "'7-7' is not a tile: write tiles as a-b, such as 6-6 or 5-1."),
        ("/api/move", {"play": ["-"]}, 400, "'-' is not a tile: write tiles as a-b"),
        ("/api/move", {"option": 0, "version": 99}, 409, "the game has moved on to view"),
        ("/api/move", {"option": 0, "version": "1"}, 400, "version is the whole number of the view"),
        ("/api/move", {"discard": ["1-1"]}, 400, "lead"),
        ("/api/move", {"declare": True}, 400, "no One Red Dot"),
        ("/api/move", {"fly": 1}, 400, "unknown move"),
        ("/api/move", {"option": 0, "play": ["6-6"]}, 400, "a move is one of"),
        ("/api/move", [1, 2], 400, "a move is one of"),
        ("/api/step", {}, 409, "bots move by themselves"),
        ("/api/next", {}, 409, "not over yet"),
        ("/api/next", {"x": 1}, 400, "takes no body"),
    ],
)
def test_a_refused_request_is_a_json_error_and_changes_nothing(client, path, body, status, words):
    new_match(client, seed=13)  # seed 13: seat 0 banks and leads the first trick
    before = state(client)
    assert before["match"]["phase"] == "lead" and before["match"]["your_turn"]
    response = client.post(path, json=body)
    assert response.status_code == status, response.text
    assert words in response.json()["error"] and "Type ?" not in response.json()["error"]
    assert state(client) == before


@pytest.mark.parametrize(
    "content, headers, status",
    [
        (b"{not json", {"Content-Type": "application/json"}, 400),
        (b'{"option": 0}', {"Content-Type": "text/plain"}, 415),
        (b'{"option": 0}', {}, 415),
        (b"\xff\xfe", {"Content-Type": "application/json"}, 400),
        (b" " * (5 * 2**20), {"Content-Type": "application/json"}, 413),
    ],
    ids=["not-json", "text-plain", "no-content-type", "not-utf8", "too-large"],
)
def test_malformed_bodies_are_refused_before_anything_is_read(client, content, headers, status):
    new_match(client, seed=13)
    before = state(client)
    response = client.post("/api/move", content=content, headers=headers)
    assert response.status_code == status and "error" in response.json()
    assert state(client) == before


def test_out_of_turn_moves_are_refused(client):
    match = play_out(client, new_match(client, seed=5, hands=2), random.Random(2))
    before = state(client)
    response = client.post("/api/move", json={"option": 0})
    assert response.status_code == 409 and "the hand is over: start the next hand" in response.json()["error"]
    assert state(client) == before
    client.post("/api/new", json={"mode": "watch", "bots": "random", "hands": 1, "seed": 1})
    before = state(client)
    response = client.post("/api/move", json={"option": 0})
    assert response.status_code == 409 and "bots only" in response.json()["error"]
    assert state(client) == before
    assert not match["match_over"]


def test_without_a_match_every_move_is_refused(client):
    for path in ("/api/move", "/api/step", "/api/next"):
        response = client.post(path, json={})
        assert response.status_code in (400, 409) and "error" in response.json()
    assert state(client) == {"match": None}


def test_an_invalid_choice_is_explained_and_a_discard_offered(client):
    """Tiles that do not beat the best: the reason in words, as ``tiengow play`` gives it, and the
    same tiles offered as a discard (which is then legal)."""
    for seed in range(40):
        match = new_match(client, seed=seed, bots="expert")
        if match["phase"] != "follow" or match["size"] != 1:
            continue
        beats = {tuple(m["action"]["play"]) for m in match["moves"] if "play" in m["action"]}
        mine = [t for g in match["seats"][0]["hand"] for t in g["tiles"]]
        weak = [t for t in mine if (t,) not in beats]
        if weak:
            break
    else:
        pytest.fail("no deal among 40 seeds has a single-tile trick the person cannot beat with some tile")
    response = client.post("/api/move", json={"play": [weak[0]]})
    body = response.json()
    assert response.status_code == 400 and body["error"].startswith(f"You cannot play {weak[0]}: ")
    assert body["discard"] == [weak[0]]
    response = client.post("/api/move", json={"discard": body["discard"]})
    assert response.status_code == 200
    assert response.json()["match"]["seats"][0]["face_down"] == 1


def test_one_red_dot_is_declared_from_the_page(client, tmp_path):
    rules = {"preset": "standard", "one_red_dot": "choice"}
    match = new_match(client, seed=268, rules=rules)  # seed 268: seat 0 holds exactly one red pip
    assert match["phase"] == "declare" and match["your_turn"]
    assert [m["action"] for m in match["moves"]] == [{"seat": 0, "declare": True}, {"seat": 0, "declare": False}]
    before = state(client)
    tile = match["seats"][0]["hand"][0]["tiles"][0]
    response = client.post("/api/move", json={"play": [tile]})
    assert response.status_code == 400 and "declare One Red Dot, or decline it, first" in response.json()["error"]
    assert state(client) == before
    match = client.post("/api/move", json={"declare": True}).json()["match"]
    shown = match["settlement"]
    assert "who declared One Red Dot" in shown["head"] and shown["last_trick_winner"] == 0
    record = json.loads((tmp_path / match["finished"][0]["record"]).read_text())
    assert record["actions"] == [{"seat": 0, "declare": True}] and replay(record)["net"] == shown["net"]


@pytest.mark.parametrize(
    "body, words",
    [
        ({"bots": "nosuch"}, "seat 1: 'nosuch' is not a built-in agent; the page plays cfr, champion, expert"),
        ({"bots": "os:getcwd"}, "(plugins and MODULE:FACTORY run code, so only the command line loads them)"),
        ({"bots": "ppo:/etc/hostname"}, "seat 1: ppo's path option names a file, and this server reads no bot files"),
        ({"bots": "ppo:model.pt:sample=1"}, "names a file"),
        ({"bots": "champion:locator=loc.pt"}, "champion's locator option names a file"),
        ({"bots": "cfr:policy.npz"}, "names a file"),
        ({"bots": "champion:16:prior=net.pt"}, "champion's prior option names a file"),
        (
            {"bots": "pimc:1000000000"},
            "seat 1: 'pimc:1000000000' asks for samples 1000000000; a bot on the page searches with at most 10000",
        ),
        ({"bots": "search:100"}, "asks for samples 100000"),
        ({"bots": "ismcts:20000"}, "asks for iterations 20000"),
        ({"bots": "champion:16:particles=20000"}, "asks for particles 20000"),
        ({"bots": "pimc:8:endgame=12"}, "unknown option 'endgame'"),
        ({"bots": "pimc:abc"}, "seat 1: agent 'pimc:abc': samples is a whole number from 1 to"),
        ({"bots": "ppo:sample:sample=1"}, "names a file"),  # the file 'sample', sampled: never opened
        ({"bots": "pimc:" + "9" * 5000}, "samples is a whole number from 1 to"),
        ({"bots": "pimc:\u00b2"}, "samples is a whole number from 1 to"),
        ({"bots": ["random", "greedy"]}, "a list of 3 specs (seats 1, 2, 3)"),
        ({"rules": "nosuch"}, "unknown rules preset 'nosuch'"),
        ({"rules": "configs/rules/standard.yaml"}, "unknown rules preset"),
        ({"rules": {"players": 7}}, "rules: "),
        ({"seat": 4}, "seat must be a seat 0..3"),
        ({"hands": 0}, "hands must be a whole number from 1 to 100"),
        ({"seed": -1}, "seed must be a whole number"),
        ({"mode": "spectate"}, "mode must be 'play' or 'watch'"),
        ({"mode": "watch", "seat": 0, "bots": "random"}, "a watched match is bots only"),
        ({"colour": "red"}, "unknown field 'colour'"),
    ],
)
def test_a_bad_new_match_is_refused_with_one_line(client, body, words):
    new_match(client, seed=4)
    before = state(client)
    response = client.post("/api/new", json={"mode": "play", "bots": "random", **body})
    assert response.status_code == 400 and words in response.json()["error"]
    assert "\n" not in response.json()["error"]
    assert state(client) == before


# ----------------------------------------------------------------------------- bot files
@pytest.fixture
def bots_dir(tmp_path):
    """A bots folder (``--bots-dir``): the shipped ppo and cfr models under names of their own, a
    damaged checkpoint, a subfolder, and a link to a file outside the folder."""
    bots = tmp_path / "bots"
    (bots / "sub").mkdir(parents=True)
    shutil.copy(PPO_POLICY, bots / "mine.pt")
    shutil.copy(CFR_POLICY, bots / "sub" / "policy.npz")
    (bots / "bad.pt").write_text("not a checkpoint")
    shutil.copy(PPO_POLICY, tmp_path / "outside.pt")
    (bots / "link.pt").symlink_to(tmp_path / "outside.pt")
    return bots


def client_on(tmp_path, loopback: bool, bots_dir: Path | None) -> TestClient:
    """A client of an app as ``tiengow serve`` makes it on the loopback, or on another address."""
    app = create_app(tmp_path / "records", loopback_only=loopback, bots_dir=bots_dir)
    return TestClient(app, base_url="http://127.0.0.1" if loopback else "http://192.168.1.5")


@pytest.mark.parametrize("loopback", [True, False], ids=["loopback", "network"])
def test_a_match_plays_the_files_of_the_bots_folder_by_their_names_inside_it(tmp_path, bots_dir, loopback):
    client = client_on(tmp_path, loopback, bots_dir)
    bots = ["ppo:mine.pt:sample=1", "cfr:sub/policy.npz", "champion:8:prior=mine.pt"]
    match = play_out(client, new_match(client, bots=bots, seed=3), random.Random(0))
    assert [s["agent"] for s in match["seats"]] == [None, *bots]
    record = json.loads((tmp_path / "records" / match["finished"][0]["record"]).read_text())
    assert replay(record)["net"] == match["settlement"]["net"]
    # A damaged file of the folder: the loader's reason, with the file named as the request named it.
    for spec, words in [
        ("ppo:bad.pt", "seat 1: bad.pt is not a readable PPO checkpoint"),
        ("champion:prior=bad.pt", "seat 1: champion: prior=bad.pt: bad.pt is not a readable PPO checkpoint"),
        ("cfr:mine.pt", "seat 1: mine.pt is not a CFR policy file"),
    ]:
        response = client.post("/api/new", json={"bots": spec})
        assert response.status_code == 400 and response.json()["error"].startswith(words)
        assert str(bots_dir) not in response.json()["error"]


@pytest.mark.parametrize("folder", [True, False], ids=["bots-dir", "no-bots-dir"])
@pytest.mark.parametrize("loopback", [True, False], ids=["loopback", "network"])
def test_a_file_outside_the_bots_folder_is_refused_alike_whether_it_exists_or_not(tmp_path, bots_dir, loopback, folder):
    """Outside the folder (or with none), existing and missing files, links out and folders get
    one message, which names no path of the server and says what the page may play instead."""
    client = client_on(tmp_path, loopback, bots_dir if folder else None)
    new_match(client, seed=4)
    before = state(client)
    outside = [
        "/etc/hostname",
        "/no/such/file.pt",
        str(tmp_path / "outside.pt"),
        str(bots_dir / "mine.pt"),  # inside, but a page names files by their path inside the folder
        "../outside.pt",
        "sub/../../outside.pt",
        "link.pt",
        "missing.pt",
        "sub",
        "~/x.pt",
        ".hidden.pt",
    ]
    errors = set()
    for path in outside:
        for spec in (f"ppo:{path}", f"ppo:{path}:sample=1", f"champion:prior={path}"):
            response = client.post("/api/new", json={"mode": "watch", "bots": spec})
            assert response.status_code == 400
            error = response.json()["error"]
            assert str(tmp_path) not in error and "/etc" not in error and "outside" not in error, error
            errors.add(error)
            assert state(client) == before
    allowed = "the built-in agents with the shipped networks (ppo, cfr and champion without a path)"
    if folder:
        assert errors == {
            f"seat 0: {name}'s {key} option names no file of the server's bots folder: the page plays "
            f"{allowed}, and the files of that folder by their path inside it, such as ppo:NAME.pt, "
            "cfr:NAME.npz or champion:prior=NAME.pt"
            for name, key in (("ppo", "path"), ("champion", "prior"))
        }
    else:
        assert errors == {
            f"seat 0: {name}'s {key} option names a file, and this server reads no bot files: the page "
            f"plays {allowed}; tiengow serve --bots-dir DIR offers the files in DIR"
            for name, key in (("ppo", "path"), ("champion", "prior"))
        }
    for plugin in ("os:getcwd", "tiengow.agents.baselines:RANDOM"):  # MODULE:FACTORY would import code
        response = client.post("/api/new", json={"mode": "watch", "bots": plugin})
        assert response.status_code == 400 and "is not a built-in agent" in response.json()["error"]


def test_the_host_header_must_name_the_loopback(tmp_path):
    app = create_app(tmp_path)
    refused = TestClient(app, base_url="http://evil.example").get("/api/meta")
    assert refused.status_code == 400 and refused.headers["x-frame-options"] == "DENY"
    assert TestClient(app, base_url="http://localhost:8000").get("/api/meta").status_code == 200
    assert (
        TestClient(create_app(tmp_path, loopback_only=False), base_url="http://192.168.1.5")
        .get("/api/meta")
        .status_code
        == 200
    )


def test_sessions_are_separate_bounded_and_expire(tmp_path):
    app = create_app(tmp_path, sessions=Sessions(limit=3))
    clients = [TestClient(app, base_url="http://127.0.0.1") for _ in range(4)]
    for k, c in enumerate(clients):
        new_match(c, seed=k)
    assert [state(c)["match"]["seed"] for c in clients[1:]] == [1, 2, 3]
    assert state(clients[0])["match"] is None  # the least recently used went
    for _ in range(10):  # requests without a cookie, good or refused, make no session
        fresh = TestClient(app, base_url="http://127.0.0.1")
        assert fresh.get("/").status_code == 200 and state(fresh) == {"match": None}
        assert fresh.post("/api/move", json={"option": 0}).status_code == 409
        assert fresh.post("/api/new", json={"bots": "nosuch"}).status_code == 400
        assert not fresh.cookies
    assert [state(c)["match"]["seed"] for c in clients[1:]] == [1, 2, 3]
    sessions = Sessions(limit=5, idle=0.0)
    sessions.create()
    sid, _ = sessions.create()
    assert sessions.get(sid) is None and len(sessions) == 0


# ----------------------------------------------------------------------------- records folder
@pytest.fixture
def folder(tmp_path):
    """A records folder with one record and a league, beside a secret file outside it."""
    root = tmp_path / "records"
    (root / "m1").mkdir(parents=True)
    record = random_record(7)
    (root / "m1" / "hand-001.json").write_text(json.dumps(record))
    (root / "league.json").write_text(json.dumps(LEAGUE))
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(record))
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.json").write_text(json.dumps(record))
    os.symlink(secret, root / "link.json")
    os.symlink(tmp_path / "outside", root / "linkdir")
    os.symlink(root / "m1" / "hand-001.json", root / "inside.json")
    (root / ".hidden.json").write_text(json.dumps(record))
    return root


def random_record(seed: int) -> dict:
    from tiengow.ui.tracker import HandLog

    log = HandLog(Game(seed=seed))
    rng = np.random.default_rng(seed)
    while not log.game.is_over:
        log.step(int(rng.choice(log.game.legal_actions())))
    return log.record()


LEAGUE = {
    "agents": ["random", "greedy", "expert"],
    "deals": 100,
    "seed": 0,
    "cross_table": {
        "random": {"greedy": -15.9, "expert": -16.2},
        "greedy": {"random": 15.9, "expert": -0.7},
        "expert": {"random": 16.2, "greedy": 0.7},
    },
    "ranking": [
        {"agent": "expert", "mean_chips_per_hand": 8.45, "rating": 1612.5, "ci95": [8.1, 8.8]},
        {"agent": "greedy", "mean_chips_per_hand": 7.6, "rating": 1580.0, "ci95": [7.2, 8.0]},
        {"agent": "random", "mean_chips_per_hand": -16.05, "rating": 1300.0, "ci95": [-16.5, -15.6]},
    ],
    "matches": [{"candidate": "expert", "opponent": "greedy", "chips_per_hand": 0.7, "ci95": [0.5, 0.9], "deals": 100}],
}


@pytest.mark.parametrize(
    "name, status",
    [
        ("..", 403),
        ("../secret.json", 403),
        ("m1/../../secret.json", 403),
        ("/etc/passwd", 403),
        (None, 400),
        ("", 400),
        ("link.json", 403),
        ("linkdir/x.json", 403),
        (".hidden.json", 403),
        ("m1\\..\\..\\secret.json", 403),
        ("~/secret.json", 403),
        ("m1/./hand-001.json", 403),
        ("nosuch.json", 404),
        ("m1", 404),
        ("m1/%2e%2e/%2e%2e/secret.json", 404),
    ],
)
def test_no_file_outside_the_records_folder_can_be_read(folder, name, status):
    c = TestClient(create_app(folder), base_url="http://127.0.0.1")
    for endpoint in ("/api/replay", "/api/league"):
        response = c.get(endpoint, params={} if name is None else {"path": name})
        assert response.status_code == status, (endpoint, name, response.text)
        assert set(response.json()) == {"error"}


@pytest.mark.parametrize(
    "query, status",
    [
        ({"path": "x" * 5000}, 404),
        ({"path": "m1/" * 3000 + "x.json"}, 404),
        ({"path": "a" * 300 + ".json"}, 404),
        ({"path": "m1/hand-001.json", "index": "\u00b2"}, 400),
        ({"path": "m1/hand-001.json", "index": "9" * 5000}, 400),
    ],
)
def test_names_and_indexes_the_file_system_or_int_refuse_are_a_4xx(folder, query, status):
    c = TestClient(create_app(folder), base_url="http://127.0.0.1")
    response = c.get("/api/replay", params=query)
    assert response.status_code == status and set(response.json()) == {"error"}, response.text
    assert str(folder) not in response.json()["error"]


@pytest.mark.parametrize("path", ["/api/new", "/api/league", "/api/move"])
def test_a_body_nested_too_deeply_is_a_400(client, path):
    response = client.post(path, content=b"[" * 100_000, headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json() == {
        "error": "the request body is nested too deeply to be a request"
    }


@pytest.mark.parametrize("path", ["/api/new", "/api/league", "/api/move"])
def test_a_body_with_a_key_twice_is_a_400_naming_it(client, path):
    response = client.post(
        path, content=b'{"mode": "play", "mode": "watch"}', headers={"content-type": "application/json"}
    )
    assert response.status_code == 400 and response.json() == {
        "error": "the request body is not valid JSON: the key 'mode' appears twice in one object"
    }


@pytest.mark.parametrize(
    "raw",
    [
        "..%2Fsecret.json",
        "m1%2F..%2F..%2Fsecret.json",
        "%2Fetc%2Fpasswd",
        "%2e%2e%2fsecret.json",
        "..%5Csecret.json",
        "link.json%00.json",
    ],
)
def test_encoded_slashes_are_decoded_then_refused(folder, raw):
    c = TestClient(create_app(folder), base_url="http://127.0.0.1")
    response = c.get(f"/api/replay?path={raw}")
    assert response.status_code == 403, response.text
    assert "hands" not in response.text


def test_the_listing_shows_only_files_inside_the_folder(folder):
    c = TestClient(create_app(folder), base_url="http://127.0.0.1")
    files = {f["path"]: f["kind"] for f in c.get("/api/records").json()["files"]}
    assert files == {"m1/hand-001.json": "hands", "league.json": "league", "inside.json": "hands"}


def test_a_record_steps_trick_by_trick_to_the_settlement_of_replay(folder):
    c = TestClient(create_app(folder), base_url="http://127.0.0.1")
    data = c.get("/api/replay", params={"path": "m1/hand-001.json"}).json()
    record = json.loads((folder / "m1" / "hand-001.json").read_text())
    result = replay(record)
    frames = data["frames"]
    assert data["error"] is None and data["count"] == 1
    assert len(frames) == len(result["tricks"]) + 2  # the deal, each trick, the settlement
    assert frames[0]["hands"] == record["hands"]
    for frame, trick in zip(frames[1:-1], result["tricks"]):
        assert frame["trick"]["winner"] == trick["winner"] and frame["trick"]["leader"] == trick["leader"]
        played = sum(t["size"] for t in result["tricks"][: frame["trick"]["number"] - 1])
        assert sum(len(h) for h in frame["hands"]) == 32 - 4 * played
    assert frames[-1]["settlement"]["net"] == result["net"] and frames[-1]["columns"] == result["columns"]
    assert data["result"] == result
    assert c.get("/api/replay", params={"path": "m1/hand-001.json", "index": "2"}).status_code == 400


def test_a_refused_record_shows_up_to_the_refusal(folder):
    record = random_record(3)
    record["actions"][5] = {"seat": 0, "play": ["6-6", "6-6", "6-6"]}
    (folder / "bad.json").write_text(json.dumps(record))
    c = TestClient(create_app(folder), base_url="http://127.0.0.1")
    data = c.get("/api/replay", params={"path": "bad.json"}).json()
    assert data["error"].startswith("action 5 is refused: ") and data["result"] is None


def test_an_empty_records_file_is_said_to_hold_none(folder):
    (folder / "empty.jsonl").write_text("")
    c = TestClient(create_app(folder), base_url="http://127.0.0.1")
    response = c.get("/api/replay", params={"path": "empty.jsonl", "index": "1"})
    assert response.status_code == 422 and response.json()["error"] == "empty.jsonl holds no records"


def test_a_league_renders_whatever_fields_it_has(folder):
    c = TestClient(create_app(folder), base_url="http://127.0.0.1")
    view = c.get("/api/league", params={"path": "league.json"}).json()
    assert view["matrix"][2][1] == 0.7 and view["matrix"][0][0] is None
    assert view["ci"][2][1] == [0.5, 0.9] and view["details"][2][1]["deals"] == "100"
    assert view["ranking"]["columns"] == ["agent", "mean_chips_per_hand", "rating", "ci95"]
    assert view["ranking"]["rows"][0] == ["expert", "+8.450", "1612", "[+8.100, +8.800]"]
    assert view["info"] == {"deals": "100", "seed": "0"}
    minimal = league_view({"agents": ["a", "b"], "cross_table": {"a": {"b": 1.5}, "b": {"a": "oops"}}})
    assert minimal["matrix"] == [[None, 1.5], [None, None]]
    assert minimal["ranking"]["rows"][0][0] == "a"  # ranked from the table when the file has no ranking
    uploaded = c.post("/api/league", json=LEAGUE).json()
    assert uploaded["matrix"] == view["matrix"] and uploaded["path"] is None


def test_a_league_written_by_tiengow_league_shows_no_raw_json():
    # The file as `tiengow league` writes it: its CIs by name in cross_ci95 go to the heat map's
    # cells, not into the info line as a JSON dump cut off at 200 characters.
    from tiengow.agents.arena import league

    view = league_view(league(["random", "greedy"], deals=2, seed=0))
    assert "cross_ci95" not in view["info"] and not any("{" in v for v in view["info"].values())
    assert view["ci"][0][1] is not None and view["ci"][1][0] is not None and view["ci"][0][0] is None


@pytest.mark.parametrize(
    "data, words",
    [
        ([1, 2], "expected a JSON object"),
        ({"agents": ["a"]}, "'agents' must be a list of 2"),
        ({"agents": ["a", "a"], "cross_table": {}}, "different agent names"),
        ({"agents": ["a", "b"], "cross_table": [1]}, "'cross_table' must be an object"),
        ({"agents": ["a", "b"], "cross_table": {}, "matches": 5}, "'matches' must be a list"),
    ],
)
def test_a_file_that_is_not_a_league_is_refused(client, data, words):
    response = client.post("/api/league", json=data)
    assert response.status_code == 422 and words in response.json()["error"]


def test_a_league_with_odd_values_renders_them(client):
    big = {
        "agents": ["a", "b"],
        "cross_table": {"a": {"b": 10**400}},
        "matches": [{"candidate": "a", "opponent": "b", "ci95": [10**400, 1]}],
        "info": [10**400],
        "note": "\ud800",
    }
    response = client.post("/api/league", content=json.dumps(big), headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    view = response.json()
    assert view["matrix"][0][1] is None and view["ci"][0][1] is None and view["info"]["note"] == "\ud800"


def test_text_that_utf8_cannot_encode_is_echoed_as_json_escapes(client):
    body = json.dumps({"mode": "play", "bots": "pimc:\ud800"})  # a lone surrogate, as JSON may escape it
    response = client.post("/api/new", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and "samples is a whole number from 1 to" in response.json()["error"]
    assert "\ud800" in response.json()["error"]


def test_one_odd_file_leaves_the_rest_of_the_listing(folder):
    (folder / "bad").mkdir()
    (folder / "bad" / "agents.json").write_text('{"cross_table": {}, "agents": 5}')
    (folder / "bad" / "matches.json").write_text('{"cross_table": {}, "agents": ["a", "b"], "matches": true}')
    with open(bytes(folder / "bad") + b"/\xffname.json", "w") as f:
        f.write('{"hands": []}')
    client = TestClient(create_app(folder), base_url="http://127.0.0.1")
    listing = client.get("/api/records")
    assert listing.status_code == 200, listing.text
    paths = {f["path"] for f in listing.json()["files"]}
    assert {"m1/hand-001.json", "league.json", "bad/agents.json"} <= paths and not any("name" in p for p in paths)
    refused = client.get("/api/league", params={"path": "bad/matches.json"})
    assert refused.status_code == 422 and "'matches' must be a list" in refused.json()["error"]


def test_a_file_starting_with_a_byte_order_mark_is_listed_and_replayed(folder):
    record = (folder / "m1" / "hand-001.json").read_bytes()
    (folder / "bom.json").write_bytes(b"\xef\xbb\xbf" + record)  # as Windows editors save it
    (folder / "bom-league.json").write_bytes(b"\xef\xbb\xbf" + (folder / "league.json").read_bytes())
    c = TestClient(create_app(folder), base_url="http://127.0.0.1")
    files = {f["path"]: f["kind"] for f in c.get("/api/records").json()["files"]}
    assert files["bom.json"] == "hands" and files["bom-league.json"] == "league"
    assert c.get("/api/replay", params={"path": "bom.json", "index": 1}).json()["error"] is None
    assert c.get("/api/league", params={"path": "bom-league.json"}).status_code == 200


def test_a_move_sent_twice_is_applied_once(client):
    match = new_match(client, seed=13)
    first = client.post("/api/move", json={"option": 0, "version": match["version"]})
    assert first.status_code == 200 and state(client) == first.json()
    again = client.post("/api/move", json={"option": 0, "version": match["version"]})
    assert again.status_code == 409 and "moved on" in again.json()["error"]
    assert state(client) == first.json()


def test_a_match_that_is_over_says_so(client):
    match = play_out(client, new_match(client, seed=5), random.Random(2))
    assert match["match_over"]
    for path, body in (("/api/move", {"option": 0}), ("/api/next", {})):
        response = client.post(path, json=body)
        assert (
            response.status_code == 409
            and "the match is over after 1 hand: start a new match" in response.json()["error"]
        )


def test_an_internal_error_is_one_line_on_the_console(tmp_path, capsys, monkeypatch):
    import tiengow.web.app as web_app

    monkeypatch.setattr(web_app, "league_view", lambda data: 1 / 0)
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1", raise_server_exceptions=False)
    response = client.post("/api/league", json={})
    assert response.status_code == 500 and "ZeroDivisionError" in response.json()["error"]
    err = capsys.readouterr().err
    assert "tiengow serve: internal error on POST /api/league: ZeroDivisionError" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "name, loopback",
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("LOCALHOST", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("10.0.0.1", False),
        ("evil.example", False),
        ("0.0.0.0", False),
    ],
)
def test_loopback_names(name, loopback):
    from tiengow.web.app import is_loopback

    assert is_loopback(name) is loopback


# ----------------------------------------------------------------------------- explanations
def test_ppo_explains_with_its_policy_probabilities():
    agent = make_agent("ppo")
    game = Game(seed=2)
    observation, mask = game.observe()
    explained = agent.explain(observation, mask)
    assert explained["kind"] == "probabilities"
    assert explained["actions"] == list(np.flatnonzero(mask))
    assert sum(explained["values"]) == pytest.approx(1.0) and min(explained["values"]) >= 0
    chosen = explained["actions"][int(np.argmax(explained["values"]))]
    assert agent.act(observation, mask) == chosen


def test_pimc_explains_with_the_values_it_then_acts_on():
    agent = make_agent("pimc:8", seed=3)
    game = Game(seed=9)
    observation, mask = game.observe()
    explained = agent.explain(observation, mask, game=game)
    assert explained["kind"] == "values" and sorted(explained["actions"]) == sorted(game.legal_actions())
    chosen = explained["actions"][int(np.argmax(explained["values"]))]
    assert agent.act(observation, mask, game=game) == chosen  # explain left the random state as it was
    assert make_agent("expert").explain(observation, mask) is None


def test_watching_shows_the_acting_bots_view(client, tmp_path):
    client.post("/api/new", json={"mode": "watch", "bots": ["ppo", "expert", "ppo", "random"], "hands": 1, "seed": 2})
    shown = {}
    for _ in range(200):
        match = client.post("/api/step", json={}).json()["match"]
        shown[match["explain"]["agent"]] = match["explain"]
        if match["settlement"]:
            break
    assert match["settlement"] is not None and match["match_over"]
    ppo = shown["ppo"]
    assert ppo["kind"] == "probabilities" and sum(b["chosen"] for b in ppo["bars"]) == 1
    assert [b["value"] for b in ppo["bars"]] == sorted((b["value"] for b in ppo["bars"]), reverse=True)
    assert shown["expert"]["kind"] is None and shown["expert"]["bars"] == []
    record = json.loads((tmp_path / match["finished"][0]["record"]).read_text())
    assert replay(record)["net"] == match["settlement"]["net"]


# ----------------------------------------------------------------------------- command line
def test_serve_errors_are_one_line(tmp_path, capsys):
    from tiengow.cli import main

    afile = tmp_path / "file.txt"
    afile.write_text("x")
    assert main(["serve", "--records", str(afile)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"tiengow: error: --records {afile}: not a folder; give a folder for the hand records (new or existing)"
    )
    taken = bind("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        assert main(["serve", "--port", str(port), "--records", str(tmp_path)]) == 2
    finally:
        taken.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"port {port} on 127.0.0.1 is in use" in err
    assert main(["serve", "--port", "70000"]) == 2
    assert "--port must be 0 to 65535" in capsys.readouterr().err
    assert main(["serve", "--records", ""]) == 2
    assert "--records is empty; give a folder" in capsys.readouterr().err
    assert main(["serve", "--records", str(tmp_path / ("y" * 300))]) == 2
    assert "--records " in capsys.readouterr().err
    assert main(["serve", "--bots-dir", str(afile), "--records", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"tiengow: error: --bots-dir {afile}: not a folder; give an existing folder of bot files"
    )
    assert main(["serve", "--bots-dir", ""]) == 2
    assert "--bots-dir is empty" in capsys.readouterr().err
    assert main(["serve", "--help"]) == 0
    assert "--bots-dir DIR" in capsys.readouterr().out


# ----------------------------------------------------------------------------- load
SESSIONS = 20


def test_twenty_sessions_at_once_play_to_the_end_and_every_record_replays(tmp_path):
    """20 browser sessions (separate cookie jars) on a real server on the loopback, each a
    match of 2 hands with random legal moves; every saved record replays to what its page showed."""

    def one(k: int) -> list[tuple[str, list[int]]]:
        rng = random.Random(k)
        shown = []
        with httpx.Client(base_url=url, timeout=60) as c:
            c.get("/")
            match = c.post(
                "/api/new",
                json={
                    "mode": "play",
                    "bots": ["random", "greedy", "expert"],
                    "hands": 2,
                    "seed": 100 + k,
                    "seat": k % 4,
                },
            ).json()["match"]
            while True:
                if match["settlement"] is not None:
                    shown.append((match["finished"][-1]["record"], match["settlement"]["net"]))
                    if match["match_over"]:
                        return shown
                    response = c.post("/api/next", json={})
                else:
                    response = c.post("/api/move", json={"option": rng.randrange(len(match["moves"]))})
                assert response.status_code == 200, response.text
                match = response.json()["match"]

    with running(tmp_path) as url, ThreadPoolExecutor(SESSIONS) as pool:
        start = threading.Barrier(SESSIONS, timeout=60)
        results = list(pool.map(lambda k: (start.wait(), one(k))[1], range(SESSIONS), timeout=300))
    hands = [hand for result in results for hand in result]
    assert len(hands) == 2 * SESSIONS and len({path for path, _ in hands}) == 2 * SESSIONS
    for path, net in hands:
        assert replay(json.loads((tmp_path / path).read_text()))["net"] == net, path
    matches = sorted(Path(tmp_path).glob("*/match.jsonl"))
    assert len(matches) == SESSIONS
    # ``tiengow replay`` of a match file gives the nets its pages showed, hand by hand.
    from tiengow.cli import main

    shown = {path: net for path, net in hands}
    for match in matches[:3]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["replay", str(match)]) == 0
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        assert [line["net"] for line in lines] == [shown[f"{match.parent.name}/hand-{k:03d}.json"] for k in (1, 2)]
