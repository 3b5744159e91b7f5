"""How well d2lgpu's timing agrees with known workloads, and what it costs.

Not a test (it lives outside tests/): run it by hand and read the numbers.

    .venv/bin/python benchmarks/bench_timing.py

It prints, on this machine's CPU:
1. agreement with ``torch.utils.benchmark.Timer`` (given the real thread
   count) on the same matmul and on a ~1 µs op, measured in alternating
   rounds in one process so that both see the same load;
2. agreement with ``time.sleep`` (10 ms per call), median and best of 10;
3. the overhead: a no-op call timed by ``benchmark`` (the per-call cost that
   is included in every measurement);
4. the wall time of 7 blocks of one 20 ms call through ``benchmark`` and
   through ``torch.utils.benchmark.Timer.timeit(1)``, which warms up with two
   extra calls before every block (the reason given in d2lgpu/timing.py).
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
    """Medians of default-sized runs, alternating; then fastest short blocks."""
    env = {"torch": torch, **{f"a{i}": a for i, a in enumerate(args)}}
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(d2lgpu.benchmark(fn, *args).median)
        theirs.append(torch_median(stmt, env))
    ratios = [o / t for o, t in zip(ours, theirs)]
    print(f"{name}: d2lgpu {d2lgpu.format_time(statistics.median(ours))}, "
          f"torch.utils.benchmark {d2lgpu.format_time(statistics.median(theirs))}; "
          f"ratio of medians per round " + ", ".join(f"{r:.3f}" for r in ratios))
    # Robust to a busy machine: same number of calls per ~2 ms block,
    # alternating, fastest block of each.
    timer = tbench.Timer(stmt, globals=env, num_threads=torch.get_num_threads())
    best_ours, best_theirs = [], []
    for _ in range(15):
        m = d2lgpu.benchmark(fn, *args, repeat=3, min_block_time=0.002)
        best_ours += m.times
        for _ in range(3):
            best_theirs += timer.timeit(m.number).times
    print(f"  fastest 2 ms block: d2lgpu {d2lgpu.format_time(min(best_ours))}, "
          f"torch.utils.benchmark {d2lgpu.format_time(min(best_theirs))}, "
          f"ratio {min(best_ours) / min(best_theirs):.3f}")


def main():
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{d2lgpu.device_report()}")
    a, b = torch.randn(128, 128), torch.randn(128, 128)
    compare("matmul 128x128", "torch.mm(a0, a1)", torch.mm, (a, b))
    x = torch.ones(4)
    compare("add of 4 floats (~1 µs)", "torch.add(a0, a1)", torch.add, (x, x))

    m = d2lgpu.benchmark(time.sleep, 0.01, repeat=10, min_block_time=0)
    print(f"sleep(10 ms) by benchmark, 10 blocks of 1 call: median "
          f"{d2lgpu.format_time(m.median)} ({m.median / 0.01 - 1:+.1%}), best "
          f"{d2lgpu.format_time(min(m.times))} ({min(m.times) / 0.01 - 1:+.1%})")
    def noop():
        pass

    print(f"overhead per call inside benchmark (a no-op function): "
          f"{d2lgpu.benchmark(noop)}")
    timer = tbench.Timer("time.sleep(0.02)", globals={"time": time},
                         timer=time.perf_counter,
                         num_threads=torch.get_num_threads())
    start = time.perf_counter()
    for _ in range(7):
        timer.timeit(1)
    theirs = time.perf_counter() - start
    start = time.perf_counter()
    d2lgpu.benchmark(time.sleep, 0.02, repeat=7)
    ours = time.perf_counter() - start
    print(f"7 blocks of one sleep(20 ms): benchmark {d2lgpu.format_time(ours)} "
          f"in all (warm-up and calibration included), "
          f"torch.utils.benchmark.Timer.timeit(1) x7 {d2lgpu.format_time(theirs)}")


if __name__ == "__main__":
    main()
