//! Compiles the BPF programs with clang and generates their libbpf-rs skeletons.

fn main() {
    #[cfg(target_os = "linux")]
    linux::build();
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::PathBuf;

    use libbpf_cargo::SkeletonBuilder;

    pub fn build() {
        const SRC: &str = "src/bpf/observer.bpf.c";
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"))
            .join("observer.skel.rs");
        let arch = match std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
            Ok("x86_64") => "x86",
            Ok("aarch64") => "arm64",
            Ok(other) => {
                panic!("schedlab-live: BPF programs are written for x86_64 system-call numbers, not {other}")
            }
            Err(_) => "x86",
        };
        let include = std::env::var("DEP_BPF_INCLUDE").expect("libbpf-sys exports its headers");
        SkeletonBuilder::new()
            .source(SRC)
            .clang_args([format!("-D__TARGET_ARCH_{arch}"), "-Wall".to_string(), "-I/usr/include/x86_64-linux-gnu".to_string(), format!("-I{include}")])
            .build_and_generate(&out)
            .unwrap_or_else(|e| panic!("schedlab-live: building {SRC} failed (clang and libelf-dev needed: scripts/setup.sh): {e}"));
        println!("cargo:rerun-if-changed={SRC}");
    }
}
