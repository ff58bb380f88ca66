"""EXPERIMENT (issue 49), screened and removed: a joint tile locator.

    python -m tiengow.benchmarks.joint_locator data 4000 77001 77002   # search self-play, 7.2 min
    python -m tiengow.benchmarks.joint_locator fit OUT.pt data_77001.npz data_77002.npz   # 5 min
    tiengow eval champion:joint=OUT.pt --baseline champion --vs search --sprt 0,0.3 --max-deals 4000 --seed 93008 --workers 2
"""
import sys, time
import numpy as np
from multiprocessing import Pool
from tiengow.agents.base import make_agent
from tiengow.training.locator import hidden_places, exact_int8
from tiengow_env.env import Session

RULES = "standard"

def play_data(args):
    seed, hands = args
    session = Session(RULES)
    P = session.players
    bots = [make_agent("search", RULES, seed + s) for s in range(P)]
    obs = np.zeros(session.observation_size, dtype=np.float32)
    mask = np.zeros(session.num_actions, dtype=np.int8)
    info, places, states, observers, hand_ids = [], [], [], [], []
    for h in range(hands):
        session.reset(seed * 100003 + h)
        for s, bot in enumerate(bots):
            bot.reset(seed * 7919 + h * P + s)
        while not session.episode_over:
            for o in range(P):
                info.append(session.information_state(o))
                places.append(hidden_places(session.state, o, P))
                states.append(session.state.copy())
                observers.append(o)
                hand_ids.append(h)
            seat = session.to_act
            session.observe(seat, obs, mask)
            session.step(int(bots[seat].act(obs, mask.astype(bool), game=session.game)))
    np.savez(f"data_{seed}.npz", info=exact_int8(np.array(info)), places=np.array(places, np.int8),
             states=np.array(states, np.int64), observers=np.array(observers, np.int8), hands=np.array(hand_ids, np.int32))
    return seed

import sys, time, math
import numpy as np
import torch
from torch import nn
from tiengow_env.rules import RuleSet
from tiengow_env.search import Workspace, _rng
from tiengow_env.layout import S_HAND, S_DOWN
from tiengow_env.tiles import NUM_TYPES, TILE_TYPE
import tiengow_env._search_kernels as SK

ONE_HOT = np.eye(NUM_TYPES, dtype=np.float32)[TILE_TYPE]
P = 4
import os
NOJOINT = os.environ.get("NOJOINT") == "1"

def world_places(worlds, observers):
    """(N, 2(P-1), T) counts of hidden types per place, worlds (N, S_LEN), observers (N,)."""
    out = np.zeros((len(worlds), 2 * (P - 1), NUM_TYPES), np.float32)
    idx = np.arange(len(worlds))
    for r in range(1, P):
        other = (observers + r) % P
        for row, start in ((r - 1, S_HAND), (P - 1 + r - 1, S_DOWN)):
            bits = ((worlds[idx, start + other][:, None] >> np.arange(32)) & 1).astype(np.float32)
            out[:, row] = bits @ ONE_HOT
    return out

class JointNet(nn.Module):
    def __init__(self, inputs, hidden, width, places=6):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.marg = nn.Linear(hidden, places * NUM_TYPES)
        self.a = nn.Linear(hidden, width)
        self.b = nn.Linear(places * NUM_TYPES, width, bias=False)
        self.w = nn.Linear(width, 1)
        nn.init.zeros_(self.w.weight); nn.init.zeros_(self.w.bias)

    def forward(self, info, cand):  # info (B, D); cand (B, C, 6T) -> scores (B, C)
        h = self.trunk(info)
        s = (self.marg(h)[:, None, :] * cand).sum(-1)
        if NOJOINT:
            return s
        z = torch.relu(self.a(h)[:, None, :] + self.b(cand))
        return s + self.w(z)[..., 0]

def load_init(net, path):
    m = torch.load(path, weights_only=False)["model"]
    with torch.no_grad():
        net.trunk[0].weight.copy_(m["body.0.weight"]); net.trunk[0].bias.copy_(m["body.0.bias"])
        net.trunk[2].weight.copy_(m["body.2.weight"]); net.trunk[2].bias.copy_(m["body.2.bias"])
        net.marg.weight.copy_(m["body.4.weight"]); net.marg.bias.copy_(m["body.4.bias"])

class Negatives:
    def __init__(self):
        self.ws = Workspace(RuleSet.from_spec("standard"))
    def __call__(self, states, observers, k, seed):
        t = self.ws.tables
        rng = _rng(seed)
        out = np.zeros((len(states), k, states.shape[1]), np.int64)
        for i in range(len(states)):
            SK.deal_worlds(states[i], int(observers[i]), t.face_up, t.table, t.rules, rng, out[i])
        return world_places(out.reshape(-1, states.shape[1]), np.repeat(observers.astype(np.int64), k)).reshape(len(states), k, -1)

def batch_loss(net, neg, info, places, states, observers, k, seed):
    cand = np.concatenate([places.reshape(len(places), 1, -1).astype(np.float32), neg(states, observers, k, seed)], axis=1)
    scores = net(torch.from_numpy(info.astype(np.float32)), torch.from_numpy(cand))
    return nn.functional.cross_entropy(scores, torch.zeros(len(info), dtype=torch.long))

def main(files, out, epochs=2, k=31, width=128, lr=3e-4, batch=256, max_hands=None):
    torch.manual_seed(0)
    parts = [np.load(f) for f in files]
    tr, ho = {}, {}
    for key in ("info", "places", "states", "observers"):
        tr[key], ho[key] = [], []
    for p in parts:
        hands = p["hands"]
        cut = int(hands.max() * 0.9)
        keep = hands < (max_hands or 10**9)
        for key in tr:
            tr[key].append(p[key][(hands < cut) & keep]); ho[key].append(p[key][hands >= cut])
    tr = {k_: np.concatenate(v) for k_, v in tr.items()}
    ho = {k_: np.concatenate(v) for k_, v in ho.items()}
    # held-out subsample, fixed negatives
    rs = np.random.default_rng(1)
    sel = rs.choice(len(ho["info"]), size=min(20000, len(ho["info"])), replace=False)
    ho = {k_: v[sel] for k_, v in ho.items()}
    print("train", len(tr["info"]), "held", len(ho["info"]), flush=True)
    neg = Negatives()
    net = JointNet(tr["info"].shape[1], 256, width)
    load_init(net, str(__import__("tiengow.agents.locator", fromlist=["x"]).DEFAULT_LOCATOR))
    def held():
        with torch.no_grad():
            total = 0.0
            for s in range(0, len(ho["info"]), 1000):
                sl = slice(s, s + 1000)
                total += float(batch_loss(net, neg, ho["info"][sl], ho["places"][sl], ho["states"][sl], ho["observers"][sl], k, 999 + s)) * len(ho["info"][sl])
            return total / len(ho["info"])
    best = held()
    best_state = {kk: v.detach().clone() for kk, v in net.state_dict().items()}
    print("uniform", math.log(k + 1), "locator init", best, flush=True)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=1e-5)
    step, t0 = 0, time.time()
    for ep in range(epochs):
        order = np.random.default_rng(ep).permutation(len(tr["info"]))
        for j, s in enumerate(range(0, len(order), batch)):
            rows = np.sort(order[s:s + batch])
            loss = batch_loss(net, neg, tr["info"][rows], tr["places"][rows], tr["states"][rows], tr["observers"][rows], k, 10**6 * ep + step)
            opt.zero_grad(); loss.backward(); opt.step(); step += 1
            if step % 500 == 0:
                h = held()
                print(f"ep {ep} step {step} train {float(loss.detach()):.4f} held {h:.4f} {time.time()-t0:.0f}s", flush=True)
                if h < best:
                    best, best_state = h, {kk: v.detach().clone() for kk, v in net.state_dict().items()}
    h = held()
    if h < best:
        best, best_state = h, {kk: v.detach().clone() for kk, v in net.state_dict().items()}
    print("best held", best, flush=True)
    torch.save({"model": best_state, "width": width, "best": best}, out)

if __name__ == "__main__":
    if sys.argv[1] == "data":
        hands, seeds = int(sys.argv[2]), [int(s) for s in sys.argv[3:]]
        with Pool(len(seeds)) as pool:
            print(pool.map(play_data, [(s, hands) for s in seeds]), flush=True)
    else:
        main(sys.argv[3:], sys.argv[2], epochs=int(os.environ.get("EPOCHS", 2)))
