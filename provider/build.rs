//! One build fact the code cannot read itself: whether this crate is
//! compiled at opt-level 3, where `tests/stack_residue.rs` finds that the
//! zmm AES-GCM batch loops spill no secret, so their records skip the stack
//! scrub (`Lanes::BATCHES_SPILL`; docs/decisions.md, "AES-GCM scrub on
//! zmm"). Every other opt-level keeps the scrub.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(fusion_opt3)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=OPT_LEVEL");
    if std::env::var("OPT_LEVEL").as_deref() == Ok("3") {
        println!("cargo::rustc-cfg=fusion_opt3");
    }
}
