//! SWAP, paper 004 ("SWAP: A Scheduler With Automatic Process Dependency Detection",
//! Zheng and Nieh): find out from system calls which process a blocked process waits
//! for, learn how far to trust each such guess, and let the scheduler run the most
//! trusted provider in place of a blocked high-priority requester.
//!
//! - [`resource`]: the resource model of section 3.1 — resource objects keyed by
//!   (type, identifier) in a hash table, each with its requesters and its providers,
//!   and which objects a process blocked on a resource requests (section 3.2).
//! - [`confidence`]: the parameters K, T, L and the confidence arithmetic (±1
//!   feedback within `0..=2K`, indirect confidence `C1 · C2 / K`).
//! - [`SwapDetector`] (`detector.rs`): the model fed by the event stream, either
//!   world's, with the feedback measured from the same stream.
//! - `virtual_runnable.rs`: the decision of section 4 — whether a blocked process is
//!   virtual runnable, and which runnable provider ([`Pick`]) runs in its place.
//! - [`figure2`]: the paper's worked example replayed as a table of steps.
//!
//! Decisions the paper leaves open, and how this implementation takes them:
//! - Confidence is kept per provider list entry, i.e. per (object, provider): the
//!   paper's `C(P, P1, R)` is the same for every requester P of R (other than P1).
//! - Providers are added when the access call is entered (even if it then fails or
//!   blocks); `close` and `LOCK_UN` remove them when the call returns successfully,
//!   so that the wakeups the call itself causes still credit the caller.
//! - A semaphore object is one semaphore of a set (`SysvSem { id, num }`, as the event
//!   vocabulary names it), not the whole set; destroying the set removes them all.
//! - Positive feedback: a `Wakeup` of a blocked requester by a listed provider of an
//!   object it requests (+1, capped at 2K; the quantum restarts). Negative feedback:
//!   a provider's running time counts only while a requester other than itself is
//!   blocked on the object, accumulates across requests until a whole T is reached
//!   (−1 per T, not below 0), and restarts only at its own positive feedback; a
//!   wakeup at the very instant a quantum ends gives that quantum's unit back (it
//!   provided within the quantum, even though its own call's events came first). Running
//!   time of an indirect provider also counts for each blocked provider on the way up
//!   (each entry at most once per interval; two CPUs serving one entry count twice).
//! - A provider whose confidence reached 0 stays listed (it is the first evicted under
//!   L) but is not considered; positive feedback can bring it back.
//! - List limit: each category is kept in ascending confidence, so "the front of the
//!   lowest non-empty category" is the least confident provider (earliest to reach
//!   that value among equals), which also makes SWAP "keep the L providers with highest
//!   confidence values".
//! - Indirect confidence rounds down at each step, uses the K of the inner resource,
//!   and a chain that rounds to 0 is not considered. Each blocked process is examined
//!   once per decision (first path that reaches it), which bounds the search and ends
//!   cycles; ties go to the first candidate in depth-first order of ranked providers.
//! - Signals of interest: every signal but 0 and the exception or uncatchable ones
//!   (`SIGILL`, `SIGTRAP`, `SIGABRT`, `SIGBUS`, `SIGFPE`, `SIGKILL`, `SIGSEGV`,
//!   `SIGSTOP`, `SIGSYS`); dispositions are not in the events, so ignored signals
//!   count. A process's own signal object is deleted when it exits.

pub mod confidence;
mod detector;
pub mod figure2;
pub mod resource;
mod virtual_runnable;

pub use confidence::{Category, Confidence, KindParams, SwapParams, SwapParamsError};
pub use detector::{signal_of_interest, InitialConfidence, SocketPeer, SwapDetector};
pub use figure2::{
    figure2_params, figure2_replay, figure2_steps, EdgeConfidence, Figure2Step, RunOutcome, FIGURE2_R1,
    FIGURE2_R2,
};
pub use resource::{ProviderEntry, ResourceObject, ResourceTable};
pub use virtual_runnable::{Link, Pick};
