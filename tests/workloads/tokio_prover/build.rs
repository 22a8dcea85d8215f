// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// build.rs: links the C shim that fires gaptrace's USDT probes, built by the
// Makefile (GT_USDT_SHIM_DIR holds libgt_usdt_shim.a).
fn main() {
    println!("cargo:rerun-if-env-changed=GT_USDT_SHIM_DIR");
    let dir = std::env::var("GT_USDT_SHIM_DIR")
        .expect("GT_USDT_SHIM_DIR: build tokio_prover with make (it compiles the USDT shim)");
    println!("cargo:rerun-if-changed={}/libgt_usdt_shim.a", dir);
    println!("cargo:rustc-link-search=native={}", dir);
    println!("cargo:rustc-link-lib=static=gt_usdt_shim");
}
