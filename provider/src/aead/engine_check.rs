//! A check the engines' tests share: one engine's seal and open of a record
//! against a reference's ciphertext and tag for it.

use super::OpenError;

/// `seal` of `pt` into a zeroed buffer gives `ct` and `tag`; `open` of `ct`
/// gives `pt` back; `tag` with one bit changed fails and leaves the buffer
/// zeroed. `what` names the case in a failure.
pub(crate) fn seal_open_reject(
    what: &str,
    pt: &[u8],
    (ct, tag): (&[u8], [u8; 16]),
    seal: impl FnOnce(&mut [u8]) -> [u8; 16],
    open: impl Fn(&mut [u8], &[u8; 16]) -> Result<(), OpenError>,
) {
    let mut buf = vec![0u8; pt.len()];
    assert_eq!(seal(&mut buf), tag, "seal's tag, {what}");
    assert_eq!(buf, ct, "seal's ciphertext, {what}");
    assert_eq!(open(&mut buf, &tag), Ok(()), "open, {what}");
    assert_eq!(buf, pt, "open's plaintext, {what}");
    let mut bad = tag;
    bad[pt.len() % 16] ^= 1 << (pt.len() % 8);
    let mut buf = ct.to_vec();
    assert_eq!(open(&mut buf, &bad), Err(OpenError), "changed tag, {what}");
    assert!(buf.iter().all(|&b| b == 0), "changed tag's buffer, {what}");
}
