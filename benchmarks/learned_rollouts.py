"""EXPERIMENT (issue 49), screened and removed: rollouts by a softmax policy fitted to search.

    (at 2d631fd) python -m tiengow.benchmarks.joint_locator data 4000 77001 77002
    python -m tiengow.benchmarks.learned_rollouts 4000 W.npy      # fits on data_7700{1,2}.npz
    tiengow eval champion:1000:rollout=W.npy --baseline champion --vs search --sprt 0,0.3 --max-deals 4000 --seed 93014 --workers 2
"""
import sys, time, numpy as np, torch
from tiengow_env.rules import RuleSet
from tiengow_env.combos import table_for
from tiengow_env import _kernels as K, _learned_rollout as L
from tiengow_env.layout import S_LEN
c = table_for(RuleSet.from_spec("standard")); table, rules = c.table, c.rules_array
W = 90
def extract(path, max_hands):
    d = np.load(path)
    st, hs = d["states"][::4], d["hands"][::4]
    X, M, Y = [], [], []
    scratch = np.empty(W, np.int64); feats = np.zeros((W, L.NF)); child = np.empty(S_LEN, np.int64)
    for t in range(len(st) - 1):
        if hs[t] != hs[t + 1] or hs[t] >= max_hands:
            continue
        n = L.features(st[t], table, rules, scratch, feats)
        if n < 2:
            continue
        y = -1
        for i in range(n):
            child[:] = st[t]; K.step(child, scratch[i], table, rules)
            if np.array_equal(child, st[t + 1]):
                y = i; break
        if y < 0:
            continue
        x = np.zeros((32, L.NF)); x[:n] = feats[:n]; m = np.zeros(32, bool); m[:n] = True
        X.append(x); M.append(m); Y.append(y)
    return np.array(X), np.array(M), np.array(Y)
t0 = time.time()
parts = [extract(p, int(sys.argv[1])) for p in ("data_77001.npz", "data_77002.npz")]
X = np.concatenate([p[0] for p in parts]); M = np.concatenate([p[1] for p in parts]); Y = np.concatenate([p[2] for p in parts])
print("decisions", len(Y), time.time() - t0, flush=True)
cut = int(len(Y) * 0.9)
Xt, Mt, Yt = map(torch.from_numpy, (X, M, Y))
w = torch.zeros(L.NF, dtype=torch.float64, requires_grad=True)
opt = torch.optim.LBFGS([w], max_iter=200, line_search_fn="strong_wolfe")
def loss_of(sl):
    logits = (Xt[sl] @ w).masked_fill(~Mt[sl], -1e30)
    return torch.nn.functional.cross_entropy(logits, Yt[sl])
def closure():
    opt.zero_grad(); l = loss_of(slice(0, cut)); l.backward(); return l
opt.step(closure)
with torch.no_grad():
    held = float(loss_of(slice(cut, None)))
    logits = (Xt[cut:] @ w).masked_fill(~Mt[cut:], -1e30)
    acc = float((logits.argmax(1) == Yt[cut:]).double().mean())
    greedy_acc = float((Xt[cut:, :, 0].argmax(1) == Yt[cut:]).double().mean())
    unif = float((-torch.log(1.0 / Mt[cut:].sum(1).double())).mean())
    g = (Xt[cut:, :, 0].argmax(1) == Yt[cut:]).double(); nn_ = Mt[cut:].sum(1).double()
    print("eps-greedy(0.5) nll", float((-torch.log(0.5 * g + 0.5 / nn_)).mean()))
print("held nll", held, "uniform", unif, "argmax acc", acc, "greedy acc", greedy_acc)
print("weights", [round(v, 3) for v in w.detach().numpy().tolist()])
np.save(sys.argv[2], w.detach().numpy())
