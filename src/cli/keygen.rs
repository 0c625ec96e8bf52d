//! `fcd keygen`.

use std::path::PathBuf;

use super::{Io, Status, print};
use fcd_model::error::InputError;
use fcd_verify::certificate;

/// Creates an ed25519 key pair: PATH (private, PKCS#8 PEM) and PATH.pub.
#[derive(Debug, clap::Args)]
pub struct KeygenArgs {
    /// Where to write the private key; the public key goes to OUT.pub.
    #[arg(long)]
    out: PathBuf,
}

pub fn keygen(a: KeygenArgs, io: &mut Io<'_>) -> Result<Status, InputError> {
    let id = certificate::keygen(&a.out)?;
    print(io, &format!("key {id}\n  private {}\n  public  {}\n", a.out.display(), certificate::public_path(&a.out).display()))?;
    Ok(Status::Success)
}
