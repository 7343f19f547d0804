//! x86_64 system-call numbers and names.

use crate::syscall_table::NAMES;

/// The x86_64 numbers of the system calls the simulator issues and the behavior models
/// look for by name; any other number is still valid in an [`crate::Event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Syscall {
    Read = 0,
    Write = 1,
    Close = 3,
    Poll = 7,
    SchedYield = 24,
    Pause = 34,
    Nanosleep = 35,
    Getpid = 39,
    Sendto = 44,
    Recvfrom = 45,
    Clone = 56,
    Fork = 57,
    Exit = 60,
    Wait4 = 61,
    Kill = 62,
    Semop = 65,
    Msgsnd = 69,
    Msgrcv = 70,
    Flock = 73,
    RtSigtimedwait = 128,
    RtSigsuspend = 130,
    SchedSetscheduler = 144,
    Futex = 202,
    SchedSetaffinity = 203,
    ClockNanosleep = 230,
    ExitGroup = 231,
}

impl Syscall {
    /// The kernel's number.
    pub const fn nr(self) -> u32 {
        self as u32
    }
}

/// The name of x86_64 system call `nr`, or `None` for an unassigned number.
pub fn syscall_name(nr: u32) -> Option<&'static str> {
    NAMES.get(nr as usize).copied().filter(|n| !n.is_empty())
}

/// The x86_64 number of the system call named `name` (as in `unistd_64.h`, without `__NR_`).
pub fn syscall_nr(name: &str) -> Option<u32> {
    if name.is_empty() {
        return None;
    }
    NAMES.iter().position(|n| *n == name).map(|i| i as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_known_numbers() {
        assert_eq!(syscall_name(0), Some("read"));
        assert_eq!(syscall_name(62), Some("kill"));
        assert_eq!(syscall_name(314), Some("sched_setattr"));
        assert_eq!(syscall_name(462), Some("mseal"));
        assert_eq!(syscall_name(335), None);
        assert_eq!(syscall_name(100_000), None);
        assert_eq!(syscall_nr("epoll_wait"), Some(232));
        assert_eq!(syscall_nr(""), None);
        assert_eq!(syscall_nr("no_such_call"), None);
    }

    #[test]
    fn named_calls_agree_with_table() {
        use Syscall::*;
        for s in [
            Read,
            Write,
            Close,
            Poll,
            SchedYield,
            Pause,
            Nanosleep,
            Getpid,
            Sendto,
            Recvfrom,
            Clone,
            Fork,
            Exit,
            Wait4,
            Kill,
            Semop,
            Msgsnd,
            Msgrcv,
            Flock,
            RtSigtimedwait,
            RtSigsuspend,
            SchedSetscheduler,
            Futex,
            SchedSetaffinity,
            ClockNanosleep,
            ExitGroup,
        ] {
            let name = syscall_name(s.nr()).unwrap();
            assert_eq!(syscall_nr(name), Some(s.nr()), "{s:?}");
            assert_eq!(format!("{s:?}").to_lowercase(), name.replace('_', ""), "{s:?}");
        }
    }
}
