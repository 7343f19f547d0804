//! `schedlab restore` removes the empty cpuset groups a killed daemon left. A binary of
//! its own: the function removes every empty schedlab group, which would race with the
//! groups of the tests in cgroup.rs. Needs root; fails with the reason otherwise.
#![cfg(target_os = "linux")]

use schedlab_live::cgroup::{remove_empty_groups, CpusetGroup, Hierarchy};
use schedlab_live::settings::CpuSet;

#[test]
fn empty_groups_are_removed_and_populated_ones_kept() {
    // SAFETY: no arguments.
    assert_eq!(unsafe { libc::geteuid() }, 0, "making cpuset groups needs root");
    let hierarchies = Hierarchy::detect_all().expect("read the mounts");
    assert!(!hierarchies.is_empty(), "this machine offers no cpuset cgroup controller");
    for h in hierarchies {
        let name = format!("leftover-{}", std::process::id());
        let group = CpusetGroup::create_in(&h, &name, &CpuSet::new([0])).expect("make a group");
        let dir = group.dir();
        let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = schedlab_model::Pid(sleeper.id());
        group.move_process(pid).unwrap();
        remove_empty_groups().unwrap();
        assert!(dir.exists(), "a group with a process is kept");
        h.move_to(pid, "/").unwrap();
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        assert!(remove_empty_groups().unwrap() >= 1);
        assert!(!dir.exists(), "the empty group is gone: {}", dir.display());
    }
}
