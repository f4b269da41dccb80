//! One build fact the code cannot read itself: whether this crate is
//! compiled at opt-level 3, where `tests/stack_residue/` finds that some
//! AES-GCM engines' records spill no secret (the zmm engines, the ymm
//! engine and the AVX AES-NI engine, both key sizes), so those skip the
//! stack scrub
//! (`Lanes::batches_spill`; docs/decisions.md, "AES-GCM scrub where nothing
//! spills"). Every other opt-level keeps the scrub.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(fusion_opt3)");
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var("OPT_LEVEL").as_deref() == Ok("3") {
        println!("cargo::rustc-cfg=fusion_opt3");
    }
}
