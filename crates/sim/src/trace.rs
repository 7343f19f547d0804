//! Chrome/Perfetto trace JSON from the event stream: one track per CPU.
