#!/usr/bin/env python3
"""Prints the table of a live result kept in results/ (a command's --json output, dated):
`scripts/results.py KIND FILE`. The README's live tables are this script's output on
the file they cite, so that every live number there comes from a kept run and
`make readme` refreshes them. KIND is the command that wrote FILE:

  validate   schedlab validate --json
  deps       schedlab bench deps --json (with or without --with-daemon, --multi-server)
  slices     schedlab bench slices --json
  policies   schedlab bench policies --json (with or without --sim)
  overhead   schedlab bench overhead --json

Its first line is the file's provenance (when it was written, by which commit and build,
on what kernel and CPU, by what command), or that it has none: files written before
schedlab recorded it.
"""
import json
import sys


def table(rows):
    """Left-aligns the first column and right-aligns the others, two spaces apart."""
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        cells = [str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        print("  ".join(cells).rstrip())


def ms(ns):
    return f"{ns / 1e6:.1f}"


def validate(r):
    h = r["hackbench"]
    err = lambda v: "-" if v is None else f"{v * 100:+.1f} %"
    rows = [["G", "real (ms)", "simulated (ms)", "error", "real voluntary switches", "simulated", "error"]]
    for row in h["rows"]:
        rows.append([
            row["groups"], ms(row["real_ns"]), ms(row["sim_ns"]),
            err(row.get("makespan_error", row["sim_ns"] / row["real_ns"] - 1)),
            row["real_nvcsw"], row["sim_nvcsw"],
            err(row.get("voluntary_switch_error", row["sim_nvcsw"] / max(row["real_nvcsw"], 1) - 1)),
        ])
    print(f"{h['command']} (median of {r['reps']}) against {h['sim_spec']}, {r['cpus']} CPUs, {r['fair']}")
    table(rows)
    f = h["fit"]
    if f:
        print(f"real = {f['slope']:.3f} x simulated + {f['intercept'] / 1e6:.1f} ms, R² = {f['r2']:.3f}; "
              f"through the origin {f['slope_through_origin']:.3f}")
    if h.get("other_load") is not None:
        print(f"other processes kept {h['other_load'] * 100:.0f} % of the CPUs busy meanwhile")
    c = r.get("calibration")
    if c:
        print(f"calibration: null syscall {c['null_syscall_ns']:.0f} ns, pipe syscall {c['pipe_syscall_ns']:.0f} ns, "
              f"copy {c['copy_ns_per_kib']:.0f} ns/KiB, "
              + (f"memset {c['mem_ns_per_kib']:.1f} ns/KiB, " if "mem_ns_per_kib" in c else "")
              + (f"wake-up {c['wakeup_ns']:.0f} ns, " if "wakeup_ns" in c else "")
              + f"context switch {c['context_switch_ns']:.0f} ns"
              + (f", fork {c['fork_ns'] / 1e3:.0f} µs, a forked child's life {c['exit_ns'] / 1e3:.0f} µs"
                 if "exit_ns" in c else "")
              + (f", idle CPU exit {c['idle_exit_ns'] / 1e3:.1f} µs" if c.get("idle_exit_ns") is not None else "")
              + (f", remote wake-up +{c['wakeup_remote_ns'] / 1e3:.1f} µs"
                 if c.get("wakeup_remote_ns") is not None else ""))
    rt = r.get("rtapp")
    if rt and rt["files"]:
        print()
        rows = [["rt-app file / thread", "real (ms)", "simulated (ms)", "real share", "simulated share"]]
        for fl in rt["files"]:
            pct = lambda v: "-" if v is None else f"{v * 100:.1f} %"
            opt = lambda v: "-" if v is None else ms(v)
            slow = f" (loop ×{fl['slowdown']:.3f})" if fl.get("slowdown") else ""
            rows.append([fl["file"] + slow, opt(fl["real_makespan_ns"]), opt(fl["sim_makespan_ns"]), "", ""])
            for t in fl["tasks"]:
                rows.append(["  " + t["name"], opt(t["real_runtime_ns"]), opt(t["sim_runtime_ns"]),
                             pct(t["real_share"]), pct(t["sim_share"])])
        table(rows)
    tr = r.get("trace")
    if tr:
        print()
        print(f"one run of {tr['groups']} groups traced, real and simulated")
        us = lambda ns: f"{ns / 1e3:.1f} µs"
        rows = [["", "real", "simulated"]]
        for name, f in [("voluntary switches", lambda s: s["voluntary_switches"]),
                        ("involuntary switches", lambda s: s["involuntary_switches"]),
                        ("run, median", lambda s: us(s["run_median_ns"])),
                        ("CPU time (ms)", lambda s: ms(s["run_ns"])),
                        ("wake-ups", lambda s: s["wakeups"]),
                        ("  onto the waker's CPU", lambda s: s["wakeups_on_wakers_cpu"]),
                        ("  onto an idle CPU", lambda s: s["wakeups_to_idle_cpu"]),
                        ("  preempting on arrival", lambda s: s["wakeups_preempting"]),
                        ("wake-up to run, median", lambda s: us(s["wake_to_run_median_ns"])),
                        ("idle time (ms)", lambda s: ms(s["idle_ns"])),
                        ("other tasks' CPU time (ms)", lambda s: ms(s["other_ns"]))]:
            rows.append([name, f(tr["real"]), f(tr["sim"])])
        table(rows)
    if r.get("verdicts"):
        print()
        show = {"ratio": lambda x: f"{x * 100:.1f} %", "points": lambda x: f"{x:.1f} points",
                "slope": lambda x: f"{x:.3f}"}
        rows = [["fidelity target", "limit", "worst", "at", ""]]
        for v in r["verdicts"]:
            f = show[v["unit"]]
            rows.append([v["target"], f(v["limit"]), "-" if v["worst"] is None else f(v["worst"]), v["at"] or "",
                         "met" if v["met"] else "missed"])
        table(rows)


def deps(r):
    names = {"unloaded": "unloaded", "loaded": "loaded", "reniced": "loaded, reniced", "daemon": "loaded, daemon"}
    scenarios = [c["scenario"] for c in r["kinds"][0]["cells"]]
    rows = [["IPC"] + [names.get(s, s) for s in scenarios]]
    for k in r["kinds"]:
        cells = []
        for c in k["cells"]:
            m = c["stats"]["median_ms"]
            ratio = c.get("ratio_to_unloaded")
            cells.append(f"{m:.1f} ms" + ("" if c["scenario"] == "unloaded" or ratio is None else f" ({ratio:.2f}x)"))
        rows.append([k["kind"]] + cells)
    print(f"median round trip of {r['iterations']} ({r['warmup']} warm-up), sort of {r['sort_len']} integers, "
          f"client nice {r['client_nice']}, {r['load']} hogs on each of CPUs {r['cpus']}")
    table(rows)


# Where a test program's burst falls against the slice and T_m (bench slices' zones).
ZONES = {"within_slice": "within the slice", "slice_plus_tm": "slice ... slice + T_m", "beyond": "past slice + T_m"}


def slices(r):
    default = r["default_slice_ms"]
    print(f"CPU {r['cpu']}, {r['runs']} runs per side, default slice "
          f"{'unreadable' if default is None else f'{default:.1f} ms'}, T_m {r['tm_ms']} ms, enforcer {r['enforcer']}")
    rows = [["program", "the burst is", "without (ms)", "with the daemon (ms)", "ratio", "slices set/reset"]]
    for p in r["programs"]:
        d = p["with_daemon"].get("daemon") or {}
        rows.append([
            p["label"], ZONES.get(p.get("zone"), "one long burst"), f"{p['without']['mean_ms']:.1f}",
            f"{p['with_daemon']['mean_ms']:.1f}", f"{p['ratio']:.3f}",
            f"{d.get('slices_set', '-')}/{d.get('slices_reset', '-')}",
        ])
    table(rows)
    for s in r.get("skipped") or []:
        print(f"skipped: {s}")


def policies(r):
    rows_of = [("pi", "real_s", "real (s)", "{:.2f}"), ("pi", "nivcsw", "involuntary switches", "{:.0f}"),
               ("rw", "real_s", "real (s)", "{:.3f}"), ("rw", "nvcsw", "voluntary switches", "{:.0f}"),
               ("mixed", "real_s", "real (s)", "{:.2f}")]
    cells = {(c["program"], c["policy"], c["size"]): c for c in r["cells"]}
    sims = {(c["program"], c["policy"], c["size"]): c["metrics"] for c in r.get("sim") or []}
    policies = list(dict.fromkeys(c["policy"] for c in r["cells"]))
    sizes = sorted({c["size"] for c in r["cells"]})
    print(f"workers on CPUs {r['cpus']}, the runner on {r['runner_cpus']}, {r['reps']} reps, RT throttling "
          f"{r['rt_runtime_us']}/{r['rt_period_us']} us; means, the simulator's in parentheses; {r['wall_s']:.0f} s")
    size_list = " / ".join(str(n) for n in sizes)
    rows = [[""] + [f"{p.upper()} {size_list}" for p in policies]]
    for program, key, label, fmt in rows_of:
        if not any(k[0] == program for k in cells):
            continue
        row = [f"{program} {label}"]
        for pol in policies:
            live = []
            for n in sizes:
                c = cells.get((program, pol, n))
                live.append("timeout" if c is None or c["stats"] is None else fmt.format(c["stats"][key]["mean"]))
            text = " / ".join(live)
            sim = [sims.get((program, pol, n)) for n in sizes]
            if all(m is not None for m in sim):
                text += " (" + " / ".join(fmt.format(m[key]) for m in sim) + ")"
            row.append(text)
        rows.append(row)
    table(rows)


def overhead(r):
    print(f"{r['command']}, {r['rounds']} interleaved rounds per mode, medians of hackbench's times")
    rows = [["mode", "median", "vs bare", "min", "max", "lost"]]
    for m in r["modes"]:
        t = m["times_s"]
        lost = "-" if m["lost_events"] is None else m["lost_events"]
        rows.append([m["mode"], f"{m['median_s']:.3f} s", f"{m['vs_bare_pct']:+.1f} %", f"{min(t):.3f} s",
                     f"{max(t):.3f} s", lost])
    table(rows)
    for n in r["notes"]:
        print(f"note: {n}")


def provenance(r):
    """The report's provenance on one line: date, commit, kernel, build, CPU, command."""
    p = r.get("provenance")
    if p is None:
        return "no provenance: written before schedlab recorded it"
    return (f"provenance: {p['date']}, commit {p['commit']}, kernel {p['kernel']}, {p['profile']} build, "
            f"{p['cpu_model']} ({p['cpus']} CPUs): {p['command']}")


KINDS = {"validate": validate, "deps": deps, "slices": slices, "policies": policies, "overhead": overhead}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in KINDS:
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(KINDS)}}} FILE")
    with open(sys.argv[2]) as f:
        report = json.load(f)
    print(provenance(report))
    KINDS[sys.argv[1]](report)
