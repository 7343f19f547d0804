//! Built-in workload specs (`hackbench:groups=10,fds=20`, `pi`, `rw`, `mixed`): parsed
//! and built, within the task bound.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|spec: &str| {
    let _ = schedlab_sim::workloads::builtin(spec);
});
