"""How well d2lgpu's timing agrees with known workloads, and what it costs.

Not a test (pytest does not collect it): run it by hand and read the numbers.

    .venv/bin/python tests/unit/bench_timing.py

It prints, on this machine's CPU:
1. agreement with ``torch.utils.benchmark.Timer`` (given the real thread
   count) on the same matmul and on a ~1 µs op, measured in alternating
   rounds in one process so that both see the same load;
2. agreement with ``time.sleep`` (10 ms per call for ``benchmark``, 50 ms for
   ``Timer``);
3. the overhead: a no-op call timed by ``benchmark`` (the per-call cost that
   is included in every measurement) and an empty ``with Timer():`` block.
"""

import statistics
import time

import torch
import torch.utils.benchmark as tbench

import d2lgpu


def torch_median(stmt, env, min_run_time=0.2):
    timer = tbench.Timer(stmt, globals=env, num_threads=torch.get_num_threads())
    return timer.blocked_autorange(min_run_time=min_run_time).median


def compare(name, stmt, fn, args, rounds=5):
    env = {"torch": torch, **{f"a{i}": a for i, a in enumerate(args)}}
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(d2lgpu.benchmark(fn, *args).median)
        theirs.append(torch_median(stmt, env))
    ratios = [o / t for o, t in zip(ours, theirs)]
    print(f"{name}: d2lgpu {d2lgpu.format_time(statistics.median(ours))}, "
          f"torch.utils.benchmark {d2lgpu.format_time(statistics.median(theirs))}; "
          f"ratio per round " + ", ".join(f"{r:.3f}" for r in ratios)
          + f"; median ratio {statistics.median(ratios):.3f}")


def main():
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{d2lgpu.device_report()}")
    a, b = torch.randn(256, 256), torch.randn(256, 256)
    compare("matmul 256x256", "torch.mm(a0, a1)", torch.mm, (a, b))
    x = torch.ones(4)
    compare("add of 4 floats (~1 µs)", "torch.add(a0, a1)", torch.add, (x, x))

    m = d2lgpu.benchmark(time.sleep, 0.01)
    print(f"sleep(10 ms) by benchmark: {m}; error {m.median / 0.01 - 1:+.1%}")
    with d2lgpu.Timer() as t:
        time.sleep(0.05)
    print(f"sleep(50 ms) by Timer: {t}; error {t.elapsed / 0.05 - 1:+.1%}")

    def noop():
        pass

    print(f"overhead per call inside benchmark (a no-op function): "
          f"{d2lgpu.benchmark(noop)}")
    empty = []
    for _ in range(1000):
        with d2lgpu.Timer() as t:
            pass
        empty.append(t.elapsed)
    print(f"overhead of an empty `with Timer():` block: median "
          f"{d2lgpu.format_time(statistics.median(empty))}, "
          f"min {d2lgpu.format_time(min(empty))}")


if __name__ == "__main__":
    main()
