//! Journal values as a restore reads them (a store could have been edited): every
//! setting's text is a value that applies or an error, and a CPU list never allocates
//! past the CPUs an affinity mask holds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use schedlab_live::settings::{CpuSet, Value};
use schedlab_store::Setting;

fuzz_target!(|text: &str| {
    for what in Setting::ALL {
        if let Ok(v) = Value::parse(what, text) {
            // What parses prints back as something that parses to the same.
            assert_eq!(Value::parse(what, &v.to_string()).ok(), Some(v));
        }
    }
    let _ = CpuSet::parse_list(text);
    let _ = schedlab_live::config::parse_cpu_list(text);
});
