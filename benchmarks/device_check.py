"""Statistics of a JAX array on an accelerator: no host copy, exact, and how fast.

Run (on a machine with a GPU):  python benchmarks/device_check.py [--n 100000000]

1. Under ``jax.transfer_guard_device_to_host("disallow")`` -- which turns
   every *implicit* device-to-host transfer into an error -- the statistics of
   an n-sized array on the GPU are computed; the only transfer is bece's one
   explicit ``jax.device_get`` of the small results. (The guard is checked to
   fire on ``np.asarray`` of the same array first.)
2. The result equals the host path on the same float32 values (counts
   exactly, sums to float64 rounding), in JAX's default 32-bit mode, and
   ``jax_enable_x64`` is unchanged afterwards.
3. Time of each reduction (``bece._stats.device.METHODS``) against one ``jnp.sum`` over
   the same array on the device, measured alternately in this run.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import bece
from bece._stats import device as _device


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10**8)
    args = parser.parse_args()
    n = args.n
    dev = jax.devices()[0]
    print(f"device: {dev.device_kind} ({dev.platform}); jax {jax.__version__}; "
          f"jax_enable_x64={jax.config.jax_enable_x64}")
    key = jax.random.PRNGKey(0)
    k1, k2 = jax.random.split(key)
    p = jax.random.uniform(k1, (n,), dtype=jnp.float32)
    y = (jax.random.uniform(k2, (n,)) < p ** 1.2).astype(jnp.int32)
    p.block_until_ready()

    with jax.transfer_guard_device_to_host("disallow"):
        try:
            np.asarray(p[:10])
            print("guard: did NOT fire on np.asarray (this platform copies without a transfer)")
        except Exception as exc:  # the guard's error
            print(f"guard: fires on np.asarray ({type(exc).__name__})")
        stats = {}
        for method in _device.METHODS:
            stats[method] = bece.CalibrationStats(*_device.device_sums(y, p, None, 15, "uniform",
                                                                       method=method))
        print("statistics under the guard: computed, no implicit device-to-host transfer")
    print(f"jax_enable_x64 after: {jax.config.jax_enable_x64}")

    y_host, p_host = np.asarray(y), np.asarray(p)
    host = bece.CalibrationStats.from_arrays(y_host, p_host)
    eps = np.finfo(np.float64).eps
    for method, s in stats.items():
        same = np.array_equal(s.counts, host.counts)
        err = np.abs(s.sum_p - host.sum_p).max()
        bound = 2 * n * eps * host.sum_p.sum()
        print(f"{method}: counts equal host: {same}; max |sum_p - host| = {err:.3g} "
              f"(float64 bound {bound:.3g}); dtypes {s.counts.dtype}, {s.sum_p.dtype}")

    def best_alternating(fns: dict, repeat: int = 7) -> dict:
        times = {k: [] for k in fns}
        for _ in range(repeat):
            for k, f in fns.items():
                t0 = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t0)
        return {k: min(v) for k, v in times.items()}

    jsum = jax.jit(jnp.sum)
    jsum(p).block_until_ready()
    fns = {"jnp.sum": lambda: jsum(p).block_until_ready()}
    for method in _device.METHODS:
        fns[method] = lambda method=method: _device.device_sums(y, p, None, 15, "uniform", method=method)
    t = best_alternating(fns)
    print(f"\n| n = {n:.0e} float32 on {dev.device_kind} | seconds | ratio to jnp.sum |")
    print("|---|---:|---:|")
    for k, v in t.items():
        print(f"| {k} | {v:.5f} | {v / t['jnp.sum']:.2f} |")
    host_sum = lambda: np.sum(p_host)  # noqa: E731
    host_stats = lambda: bece.CalibrationStats.from_arrays(y_host, p_host)  # noqa: E731
    th = best_alternating({"np.sum": host_sum, "stats": host_stats}, repeat=3)
    print(f"| host path, same data in host memory (CPU, numba) | {th['stats']:.5f} | "
          f"{th['stats'] / t['jnp.sum']:.2f} (np.sum on host: {th['np.sum']:.5f} s) |")


if __name__ == "__main__":
    main()
