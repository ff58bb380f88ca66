"""``tiengow train cfr`` and ``tiengow nashconv`` (``tiengow.training.cfr``).

tiengow train cfr --config configs/cfr_micro.yaml [--out PATH] [--algorithm A] [--iterations N]
                  [--log-every N] [--seed S] [--log-dir DIR] [--json]
tiengow nashconv POLICY [--rules micro] [--banker 0] [--json]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from tiengow.agents.infra import json_text
from tiengow.options import int_option, rules_option
from tiengow.training.runs import check_output_path, run_dir


def add_parsers(subparsers: argparse._SubParsersAction, train_subparsers: argparse._SubParsersAction) -> None:
    """Add ``nashconv`` to ``subparsers`` and ``cfr`` to ``train_subparsers`` (``tiengow train``)."""
    add_train_cfr_parser(train_subparsers)
    p = subparsers.add_parser("nashconv", help="exact NashConv of a tabular CFR policy on a small preset")
    p.add_argument("policy", help="policy file (.npz from tiengow train cfr), or 'uniform'")
    p.add_argument(
        "--rules",
        help="rules of the exact tree: preset, YAML/TOML file or JSON object "
        "(default: the rules the policy was trained on)",
    )
    p.add_argument("--banker", type=int_option(0), default=None, help="the fixed banker (default: the policy's)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=cmd_nashconv)


def add_train_cfr_parser(train_subparsers: argparse._SubParsersAction) -> None:
    p = train_subparsers.add_parser("cfr", help="CFR+, CFR or MCCFR (configs/cfr_micro.yaml, configs/cfr.yaml)")
    p.add_argument(
        "--config",
        required=True,
        help="YAML config (training.cfr.CfrConfig): a file, or a shipped name (cfr_micro, cfr)",
    )
    p.add_argument(
        "--out",
        help="policy file to write (default: the config's out if it sets one, else "
        "runs/train-cfr/DATE-TIME/CONFIG.npz)",
    )
    p.add_argument("--algorithm", help="override the config's algorithm (cfr+, cfr, mccfr, mccfr_abstract)")
    p.add_argument("--iterations", type=int_option(1), help="override the config's iterations")
    p.add_argument("--log-every", type=int_option(1), help="override the config's iterations between measurements")
    p.add_argument("--seed", type=int_option(0), help="override the config's seed")
    p.add_argument(
        "--log-dir", help="TensorBoard folder (default: the config's log_dir if it sets one, else the policy's folder)"
    )
    p.add_argument("--json", action="store_true", help="print the run summary as JSON")
    p.set_defaults(handler=cmd_train_cfr)


def cmd_train_cfr(args: argparse.Namespace) -> int:
    """Run a CFR config with a progress bar; print where the policy went and the last measurement."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from tiengow.training.cfr import CfrConfig, train
    from tiengow.training.config import read_settings

    config = CfrConfig.from_file(
        args.config,
        algorithm=args.algorithm,
        iterations=args.iterations,
        log_every=args.log_every,
        seed=args.seed,
        log_dir=args.log_dir,
    )
    settings = read_settings(args.config)
    log_dir_given = args.log_dir is not None or "log_dir" in settings
    if log_dir_given and config.log_dir is not None:
        check_output_path(
            config.log_dir, "--log-dir" if args.log_dir is not None else f"log_dir (in {args.config})", folder_only=True
        )
    if args.out is not None or "out" in settings:  # a path the user gave
        out = args.out if args.out is not None else config.out
        check_output_path(out, "--out" if args.out is not None else f"out (in {args.config})")
    else:  # no path given: a new run folder
        out = os.path.join(run_dir("train-cfr"), os.path.splitext(os.path.basename(args.config))[0] + ".npz")
    if not log_dir_given:  # the TensorBoard log goes beside the policy
        config.log_dir = os.path.dirname(out) or "."
    console = Console(stderr=True)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    task = progress.add_task(f"{config.algorithm} on {config.rules}", total=config.iterations)

    def advance(iterations: int, point: dict) -> None:
        """Move the bar; without a terminal, print a plain line every 5 s and at the end."""
        progress.update(task, advance=iterations, description=f"{config.algorithm} on {config.rules}  {_brief(point)}")
        now = time.perf_counter()
        if not console.is_terminal and (now - printed[0] >= 5 or point["iteration"] >= config.iterations):
            printed[0] = now  # a log file gets a plain line every 5 s instead of a bar
            console.print(
                f"iteration {point['iteration']:,} ({point['seconds']:.1f} s): {_brief(point)}", soft_wrap=True
            )

    start = time.perf_counter()
    printed = [start]
    with progress:
        summary = train(config, out=out, progress=advance, notice=lambda text: console.print(text))
    summary["wall_seconds"] = round(time.perf_counter() - start, 3)
    if args.json:
        print(json_text({k: v for k, v in summary.items() if k != "rules"}))
        return 0
    print(
        f"wrote {summary['out']}: {summary['algorithm']} on {summary['rules_name']}, "
        f"{summary['iterations']:,} iterations in {summary['seconds']:.1f} s of training"
    )
    print(f"  last measurement: {_brief(summary['curve'][-1])}")
    if summary["log_dir"] is not None:
        print(f"  TensorBoard: tensorboard --logdir {summary['log_dir']}")
    return 0


def _brief(point: dict) -> str:
    if "nash_conv" in point:
        return f"NashConv {point['nash_conv']:.5f} ({100 * point['ratio']:.3g}% of uniform)"
    parts = [f"{point.get('buckets', 0):,} buckets"]
    for name, value in point.items():
        if name.startswith("chips_vs_"):
            opponent = name[len("chips_vs_") :]
            parts.append(f"vs {opponent} {value:+.2f}±{point['ci95_vs_' + opponent]:.2f}")
    return ", ".join(parts)


def cmd_nashconv(args: argparse.Namespace) -> int:
    """Print the NashConv of a tabular policy (and of the uniform policy) on its exact tree."""
    import os

    from tiengow.training.cfr import load_policy, tabular_policy_for
    from tiengow.training.cfr_tabular import build_tree, nash_conv
    from tiengow_env.rules import RuleSet

    uniform_only = args.policy == "uniform" and not os.path.exists(args.policy)
    loaded = None if uniform_only else load_policy(args.policy)
    if loaded is not None and loaded["kind"] != "tabular":
        raise ValueError(
            f"{args.policy} is an abstract (full-game) policy; NashConv needs a tabular policy of an "
            "exact small tree (tiengow train cfr --config configs/cfr_micro.yaml)"
        )
    if args.rules is not None:
        rules = rules_option(args.rules)
    elif loaded is not None:
        rules = RuleSet.from_spec(loaded["meta"]["rules"])
    else:
        rules = RuleSet.from_spec("micro")
    banker = args.banker if args.banker is not None else (loaded["banker"] if loaded else 0)
    tree = build_tree(rules, banker)
    uniform = nash_conv(tree, tree.uniform_policy())
    result = uniform if loaded is None else nash_conv(tree, tabular_policy_for(tree, loaded))
    out = {
        "nash_conv": result["nash_conv"],
        "uniform_nash_conv": uniform["nash_conv"],
        "ratio": result["nash_conv"] / uniform["nash_conv"] if uniform["nash_conv"] > 0 else 0.0,
        "per_seat": result["per_seat"],
        "best_response_values": result["best_response_values"],
        "values": result["values"],
        "rules": rules.name,
        "banker": banker,
        "infosets": tree.num_infosets,
        "policy": args.policy,
    }
    if loaded is not None:
        out.update(algorithm=loaded["meta"].get("algorithm"), iterations=loaded["meta"].get("iterations"))
    if args.json:
        print(json_text(out))
        return 0
    print(f"{args.policy} on {rules.name} (banker {banker}, {tree.num_infosets:,} information sets)")
    print(f"  NashConv          {out['nash_conv']:.6f}   ({100 * out['ratio']:.3g}% of uniform)")
    print(f"  uniform NashConv  {out['uniform_nash_conv']:.6f}")
    print("  per seat (best response - value): " + ", ".join(f"{g:.5f}" for g in out["per_seat"]))
    sys.stdout.flush()
    return 0
