//! The daemon's configuration (TOML): any text is a configuration or an error that
//! names its line; never a panic or an allocation the text did not pay for.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = schedlab_live::config::Config::parse(text, "fuzz.toml");
});
