//! Behavior models fed by the event stream: syscall profiles, classifiers, PFS, SWAP (filled by later issues).
