# A hostile workload for the daemon (crates/cli/tests/daemon.rs): a root SCHED_FIFO 10
# waiter reads a FIFO that a process of user nobody writes 100 times, forking a child
# while the waiter waits on it (when the daemon boosts it); a second process of nobody
# signals a root waiter, and is refused (EPERM) every time. Prints one line:
#   boosted=N rt_seen=N bad_children=N refused=N killer_raised=N left_raised=N
# (how often the writer saw itself raised, ran real time, forked a child that kept
# anything of a raise; how many kills were refused, whether the killer was ever raised;
# whether the writer was still raised 50 ms after its requester exited).
# The waiters are real time from their exec (chrt), as the daemon sees such programs.
import os, sys, time, signal, subprocess

fifo = sys.argv[1]
os.mkfifo(fifo)
os.chmod(fifo, 0o666)
r, w = os.pipe()
RESET_ON_FORK = 0x40000000  # sched_getscheduler's flag bit


def policy():
    return os.sched_getscheduler(0) & ~RESET_ON_FORK


rt = ["taskset", "-c", "0", "chrt", "-f", "10", sys.executable, "-c"]

waiter = subprocess.Popen(rt + [
    "import os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
    "for _ in range(100):\n"
    "    if not os.read(fd, 1): break\n", fifo])
sig_waiter = subprocess.Popen(rt + [
    "import signal, os\n"
    "signal.signal(signal.SIGUSR1, lambda *a: None)\n"
    "signal.signal(signal.SIGALRM, lambda *a: os._exit(0))\n"
    "signal.alarm(3)\n"
    "while True: signal.pause()\n"])
sig_waiter_pid = sig_waiter.pid
time.sleep(0.2)

killer = os.fork()
if killer == 0:
    os.setgid(65534)
    os.setuid(65534)
    refused = raised = 0
    for _ in range(100):
        try:
            os.kill(sig_waiter_pid, signal.SIGUSR1)
        except PermissionError:
            refused += 1
        raised += os.getpriority(os.PRIO_PROCESS, 0) < 0 or policy() != os.SCHED_OTHER
        time.sleep(0.005)
    os.write(w, f"refused={refused} killer_raised={raised}\n".encode())
    os._exit(0)

writer = os.fork()
if writer == 0:
    os.setgid(65534)
    os.setuid(65534)
    fd = os.open(fifo, os.O_WRONLY)
    boosted = rt_seen = bad = 0
    for _ in range(100):
        time.sleep(0.005)  # the waiter is blocked on the FIFO: the daemon raises us now
        boosted += os.getpriority(os.PRIO_PROCESS, 0) < 0
        rt_seen += policy() != os.SCHED_OTHER
        child = os.fork()
        if child == 0:
            kept = os.getpriority(os.PRIO_PROCESS, 0) < 0 or policy() != os.SCHED_OTHER
            os._exit(1 if kept else 0)
        bad += os.waitpid(child, 0)[1] != 0
        os.write(fd, b"x")
    # The waiter exits after the 100th byte: its boost must end.
    time.sleep(0.05)
    left = os.getpriority(os.PRIO_PROCESS, 0) < 0 or policy() != os.SCHED_OTHER
    os.write(w, f"boosted={boosted} rt_seen={rt_seen} bad_children={bad} left_raised={int(left)}\n".encode())
    os._exit(0)

os.close(w)
for pid in (killer, writer):
    os.waitpid(pid, 0)
waiter.wait()
sig_waiter.kill()
sig_waiter.wait()
lines = os.read(r, 4096).decode().split()
print(" ".join(sorted(lines)), flush=True)
