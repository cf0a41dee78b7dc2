//! `app:*`.

use crate::ipc::{AppStatus, IpcError, NoArgs};
use crate::AppContext;

pub fn status(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<AppStatus, IpcError> {
    Ok(AppStatus::from(ctx))
}
