//! Compiles the sched_ext scheduler with clang-19 (Debian bookworm's default clang 14 is
//! too old for sched_ext's BPF code) and generates its libbpf-rs skeleton.

fn main() {
    #[cfg(target_os = "linux")]
    linux::build();
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::PathBuf;

    use libbpf_cargo::SkeletonBuilder;

    const SRC: &str = "src/bpf/schedlab.bpf.c";
    /// The clang that compiles it: `SCHEDLAB_BPF_CLANG` or Debian's clang-19.
    const CLANG: &str = "clang-19";

    pub fn build() {
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"))
            .join("schedlab.skel.rs");
        if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("x86_64") {
            // vmlinux.h is x86_64's (scripts/gen-vmlinux-h.sh); another architecture needs its own.
            panic!("schedlab-ext: src/bpf/vmlinux.h is generated for x86_64 only");
        }
        let clang = std::env::var("SCHEDLAB_BPF_CLANG").unwrap_or_else(|_| CLANG.to_string());
        // libbpf-sys exports its headers (bpf_helpers.h) to its dependents' build scripts.
        let include = std::env::var("DEP_BPF_INCLUDE").expect("libbpf-sys exports its headers");
        SkeletonBuilder::new()
            .source(SRC)
            .clang(&clang)
            .clang_args(["-D__TARGET_ARCH_x86".to_string(), "-mcpu=v3".to_string(), // The kernel (6.19 on) has anonymous members named by their struct tag.
                "-fms-extensions".to_string(), "-Wno-microsoft-anon-tag".to_string(), "-Wall".to_string(), format!("-I{include}"), "-Isrc/bpf".to_string()])
            .build_and_generate(&out)
            .unwrap_or_else(|e| panic!("schedlab-ext: building {SRC} with {clang} failed (clang-19 is installed by scripts/setup.sh): {e:#}"));
        for file in [SRC, "src/bpf/intf.h", "src/bpf/kfuncs.bpf.h", "src/bpf/vmlinux.h"] {
            println!("cargo:rerun-if-changed={file}");
        }
        println!("cargo:rerun-if-env-changed=SCHEDLAB_BPF_CLANG");
    }
}
