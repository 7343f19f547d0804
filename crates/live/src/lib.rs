//! The live world on Linux: eBPF observer, actuator, journal, daemon (filled by later issues).
