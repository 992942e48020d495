#!/usr/bin/env python3
"""Folds `perf script` output of solgate into stacks and says where the time went.

    perf record -F 250 --call-graph dwarf,16384 -p PID -o perf.data -- sleep 8
    perf script -i perf.data -F comm,ip,sym | bench/profile.py [--folded out.folded]

Prints the share of samples per activity (the first marker met walking each stack from its
root) and the leaf functions that cost most; `--folded` writes the folded stacks that
flame-graph tools (inferno-flamegraph, flamegraph.pl) draw.
"""
import argparse
import collections
import re
import sys

# (activity, pattern of a frame); the first that a stack's frames match, root first, wins.
ACTIVITIES = [
    ("gateway: accept an LCM task (validate, plan, persist occurrence + outbox)", r"tasks::accept"),
    ("gateway: create a VNF instance", r"vnf_instances::create|instances::create"),
    ("gateway: read an occurrence (the load driver's polls)", r"ops::show"),
    ("gateway: read an instance", r"vnf_instances::show|instances::show"),
    ("conductor: state transitions (occurrence, instance, notifications, commit)", r"lifecycle.*transition|lifecycle::record"),
    ("conductor: claim", r"engine::claim"),
    ("conductor: plan, grant, VIM steps", r"engine::(run|start|execute)|local::|infra::"),
    ("conductor: notifier", r"notifier::"),
    ("outbox relay / dispatch", r"relay::|state.*dispatch|mark_published"),
    ("HTTP, routing, SOL013 layer (other)", r"actix_http|actix_web|sol013_layer"),
    ("group commit (waiting, committing)", r"group_commit"),
    ("runtime: idle, scheduling", r"tokio::runtime|epoll_wait|park"),
]

def simplify(symbol):
    symbol = re.sub(r"<[^<>]*>", "", symbol)
    symbol = re.sub(r"<[^<>]*>", "", symbol)
    return symbol.replace(" (inlined)", "").strip() or "?"

def samples(stream):
    comm, frames = None, []
    for line in stream:
        if not line.strip():
            if comm is not None:
                yield comm, frames
            comm, frames = None, []
        elif not line[0].isspace():
            comm, frames = line.strip(), []
        else:
            parts = line.strip().split(None, 1)
            frames.append(parts[1] if len(parts) > 1 else "?")
    if comm is not None:
        yield comm, frames

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--folded")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    patterns = [(name, re.compile(pattern)) for name, pattern in ACTIVITIES]
    activity, leaves, folded = collections.Counter(), collections.Counter(), collections.Counter()
    total = 0
    for comm, frames in samples(sys.stdin):
        total += 1
        stack = list(reversed(frames))  # root first
        found = "other"
        for name, pattern in patterns:
            if any(pattern.search(frame) for frame in stack):
                found = name
                break
        activity[found] += 1
        leaves[simplify(frames[0]) if frames else "?"] += 1
        folded[";".join([comm] + [simplify(frame) for frame in stack])] += 1
    print(f"{total} samples")
    print("\nactivity (share of samples)")
    for name, count in activity.most_common():
        print(f"{100 * count / total:6.1f} %  {name}")
    print(f"\nleaf functions (top {args.top})")
    for name, count in leaves.most_common(args.top):
        print(f"{100 * count / total:6.1f} %  {name[:110]}")
    if args.folded:
        with open(args.folded, "w") as out:
            for stack, count in folded.items():
                out.write(f"{stack} {count}\n")

if __name__ == "__main__":
    main()
