# A long-lived process for the fault test (crates/cli/tests/daemon.rs): named
# sd-fault-job, with a second thread that keeps a nice value of its own (the argument).
# Prints "PID TID" (the main thread's pid, the second thread's tid) and runs until killed.
import os, sys, threading, time

own_nice = int(sys.argv[1])
with open("/proc/self/comm", "w") as f:
    f.write("sd-fault-job")
ready = threading.Event()
tid = []


def own():
    tid.append(threading.get_native_id())
    os.setpriority(os.PRIO_PROCESS, tid[0], own_nice)
    ready.set()
    while True:
        time.sleep(1)


threading.Thread(target=own, daemon=True).start()
ready.wait()
print(os.getpid(), tid[0], flush=True)
while True:
    time.sleep(1)
