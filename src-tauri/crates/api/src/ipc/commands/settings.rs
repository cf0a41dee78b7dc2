//! `settings:*`: the app's preferences.

use crate::ipc::*;
use crate::AppContext;

pub fn get(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<SettingsDto, IpcError> {
    Ok(ctx.settings()?.get()?.into())
}

pub fn update(ctx: &AppContext, args: UpdateSettingsArgs) -> Result<SettingsDto, IpcError> {
    Ok(ctx.settings()?.update(args.into())?.into())
}
